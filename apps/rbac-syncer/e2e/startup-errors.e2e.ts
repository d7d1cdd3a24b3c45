import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { repoRoot } from '@outrigger/control-plane';
import { describe, expect, it } from 'vitest';

// The built rbac-syncer refuses a retired setting before it does anything: exit status 1 and one
// line naming the variable and its replacement.
describe('rbac-syncer startup errors', () => {
  it('exits 1 on the retired GRACE_SECONDS, naming GRACE', () => {
    const main = join(repoRoot(), 'dist', 'apps', 'rbac-syncer', 'main.js');
    const result = spawnSync(process.execPath, [main], { env: { ...process.env, GRACE_SECONDS: '60' }, encoding: 'utf8', timeout: 30_000 });
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('rbac-syncer: cannot start: invalid configuration:\n  GRACE_SECONDS: retired; set GRACE=60s instead (a duration with its unit)');
    expect(result.stderr).not.toMatch(/^\s+at /m);
  });
});
