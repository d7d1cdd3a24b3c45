import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';

// `npx outrigger` right after `npm ci` on a fresh clone: nothing built. The committed workspace is
// copied without any dist/ (the copy's node_modules links the real dependencies, and @outrigger/* to the copy).
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const { kubeconfigPath } = inject('controlPlane');
let fresh: string;

function freshClone(): string {
  const dir = mkdtempSync(join(tmpdir(), 'outrigger-fresh-'));
  // The committed tree, as a clone has it (the working tree may hold others' unfinished edits).
  const archive = execFileSync('git', ['archive', 'HEAD', 'apps', 'libs', 'package.json', 'package-lock.json', 'nx.json', 'tsconfig.base.json'], { cwd: ROOT, maxBuffer: 1 << 30 });
  execFileSync('tar', ['-x', '-C', dir], { input: archive });
  mkdirSync(join(dir, 'node_modules', '@outrigger'), { recursive: true });
  for (const entry of readdirSync(join(ROOT, 'node_modules'))) {
    if (entry !== '@outrigger') symlinkSync(join(ROOT, 'node_modules', entry), join(dir, 'node_modules', entry));
  }
  for (const kind of ['apps', 'libs']) {
    for (const project of readdirSync(join(dir, kind))) symlinkSync(join('..', '..', kind, project), join(dir, 'node_modules', '@outrigger', project));
  }
  return dir;
}

function outrigger(args: string[]) {
  return spawnSync(process.execPath, [join(fresh, 'apps', 'cli', 'bin', 'outrigger.js'), ...args], { encoding: 'utf8' });
}

beforeAll(() => {
  fresh = freshClone();
});

afterAll(() => {
  rmSync(fresh, { recursive: true, force: true });
});

describe('npx outrigger on a fresh clone (nothing built)', () => {
  it('builds the CLI on demand, says so on stderr, and runs the command', () => {
    expect(existsSync(join(fresh, 'apps', 'cli', 'dist'))).toBe(false);
    expect(existsSync(join(fresh, 'libs', 'install', 'dist'))).toBe(false);
    const result = outrigger(['check', '--kubeconfig', kubeconfigPath, '-o', 'json']);
    expect(result.stderr).toContain('outrigger: not built yet (apps/cli/dist/main.js is missing); building it: npx nx run cli:build');
    expect(result.stderr).not.toContain('ERR_MODULE_NOT_FOUND');
    // check ran against the API server: nothing is installed there, so it reports failed lines and exits 1.
    expect(result.status).toBe(1);
    const report = JSON.parse(result.stdout) as { ok: boolean; checks: { check: string; result: string }[] };
    expect(report.ok).toBe(false);
    expect(report.checks.map((c) => c.check)).toContain('crd');
  }, 600_000);

  it('runs the built CLI the next time without building', () => {
    const result = outrigger(['check', '--kubeconfig', kubeconfigPath]);
    expect(result.stderr).not.toContain('building it');
    expect(result.stdout).toMatch(/checks failed/);
  });

  it('names a library build that went missing, rebuilds it, and never prints a stack', () => {
    rmSync(join(fresh, 'libs', 'install', 'dist'), { recursive: true });
    const result = outrigger(['check', '--kubeconfig', kubeconfigPath]);
    expect(result.stderr).toContain('outrigger: not built yet (libs/install/dist/index.js is missing)');
    expect(result.stderr).not.toMatch(/\n\s+at /);
    expect(result.stdout).toMatch(/checks failed/);
  }, 600_000);
});
