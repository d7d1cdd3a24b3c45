import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { repoRoot } from '@outrigger/control-plane';
import { describe, expect, it } from 'vitest';

// The built cert-manager refuses a retired setting before it does anything: exit status 1 and one
// line naming the variable and its replacement.
describe('cert-manager startup errors', () => {
  it('exits 1 on the retired LEASE_DURATION_SECONDS, naming LEASE_DURATION', () => {
    const main = join(repoRoot(), 'dist', 'apps', 'cert-manager', 'main.js');
    const result = spawnSync(process.execPath, [main], { env: { ...process.env, POD_NAMESPACE: 'outrigger-system', LEASE_DURATION_SECONDS: '60' }, encoding: 'utf8', timeout: 30_000 });
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('cert-manager: cannot start: invalid configuration:\n  LEASE_DURATION_SECONDS: retired; set LEASE_DURATION=60s instead (a duration with its unit)');
    expect(result.stderr).not.toMatch(/^\s+at /m);
  });
});
