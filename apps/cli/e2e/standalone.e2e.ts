import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, inject, it } from 'vitest';

// The release's standalone file: built by bundle.ts, copied alone into an empty directory, run with node.
const CLI_DIR = fileURLToPath(new URL('..', import.meta.url));
const FIXTURES = join(CLI_DIR, 'fixtures', 'inject');
const { kubeconfigPath } = inject('controlPlane');
let standalone = '';

function run(args: string[]) {
  return spawnSync(process.execPath, [standalone, ...args], { encoding: 'utf8', cwd: join(standalone, '..') });
}

beforeAll(() => {
  execFileSync(process.execPath, ['--import', 'tsx', '--conditions', 'development', 'bundle.ts'], { cwd: CLI_DIR, stdio: 'inherit' });
  standalone = join(mkdtempSync(join(tmpdir(), 'outrigger-standalone-')), 'outrigger.mjs');
  copyFileSync(join(CLI_DIR, 'dist', 'outrigger.mjs'), standalone);
});

describe('outrigger as one file', () => {
  it.each(readdirSync(FIXTURES).filter((f) => !f.includes('.injected.')))('injects %s exactly as the workspace build does, with its embedded reference profile', (fixture) => {
    const result = run(['inject', '-f', join(FIXTURES, fixture)]);
    expect(result.status, result.stderr).toBe(0);
    expect(result.stdout).toBe(readFileSync(join(FIXTURES, fixture.replace(/\.(ya?ml|json)$/, '.injected.$1')), 'utf8'));
  });

  it('talks to a real API server: check on a cluster without Outrigger fails, naming what is missing', () => {
    const result = run(['check', '--kubeconfig', kubeconfigPath, '--output', 'json']);
    expect(result.status).toBe(1);
    const output = JSON.parse(result.stdout) as { ok: boolean; checks: { check: string; result: string; message: string }[] };
    expect(output.ok).toBe(false);
    expect(output.checks.find((c) => c.check === 'crd')).toMatchObject({ result: 'fail', message: 'CustomResourceDefinition agentprofiles.outrigger.dev is missing' });
    expect(output.checks.find((c) => c.check === 'read')).toBeUndefined();
    expect(output.checks.find((c) => c.check === 'kubernetes-version')).toMatchObject({ result: 'pass' });
  });
});
