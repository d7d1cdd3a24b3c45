import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot } from '@outrigger/control-plane';
import { describe, expect, it } from 'vitest';

const SCRIPT = join(repoRoot(), 'tools/images/build-version.sh');

/** A repository holding only the workspace's package.json (the release version), one commit. */
function repository(): { dir: string; git: (...args: string[]) => string } {
  const dir = mkdtempSync(join(tmpdir(), 'build-version-'));
  const git = (...args: string[]) => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], { cwd: dir, encoding: 'utf8' }).trim();
  writeFileSync(join(dir, 'package.json'), '{\n  "name": "outrigger",\n  "version": "0.3.0"\n}\n');
  git('init', '-q');
  git('add', '.');
  git('commit', '-qm', 'first');
  return { dir, git };
}

const version = (dir: string) => execFileSync('bash', [SCRIPT, dir], { encoding: 'utf8' }).trim();

describe('tools/images/build-version.sh (the version baked into the images)', () => {
  it('is the package version with the commit, marked when the tree is dirty', () => {
    const { dir, git } = repository();
    const commit = git('rev-parse', '--short=12', 'HEAD');
    expect(version(dir)).toBe(`0.3.0+${commit}`);
    writeFileSync(join(dir, 'package.json'), '{ "version": "0.3.0" }\n');
    expect(version(dir)).toBe(`0.3.0+${commit}.dirty`);
  });

  it('is the release tag at HEAD, without its v', () => {
    const { dir, git } = repository();
    git('tag', 'v1.2.0');
    expect(version(dir)).toBe('1.2.0');
  });
});
