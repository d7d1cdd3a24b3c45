import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { mountsUnder, scratchDir } from './scratch-dir.js';

describe('scratchDir', () => {
  const parent = mkdtempSync(join(tmpdir(), 'scratch-parent-'));
  afterAll(() => rmSync(parent, { recursive: true, force: true }));

  it('removes everything a passing run left in it', () => {
    const scratch = scratchDir(parent, 'run-');
    mkdirSync(join(scratch.dir, 'nested', 'deeper'), { recursive: true });
    writeFileSync(join(scratch.dir, 'nested', 'deeper', 'service.log'), 'log');
    expect(scratch.finish(false)).toEqual({ kept: false });
    expect(existsSync(scratch.dir)).toBe(false);
  });

  it('keeps a failed run\'s files and says where', () => {
    const scratch = scratchDir(parent, 'run-');
    writeFileSync(join(scratch.dir, 'service.log'), 'why it failed');
    expect(scratch.finish(true)).toEqual({ kept: true, why: `the run failed: its temporary files are kept in ${scratch.dir}` });
    expect(existsSync(join(scratch.dir, 'service.log'))).toBe(true);
  });

  it('does not delete through a mount left inside it', () => {
    const scratch = scratchDir(parent, 'run-');
    const mount = join(scratch.dir, 'volume');
    mkdirSync(mount);
    execFileSync('mount', ['-t', 'tmpfs', 'tmpfs', mount]);
    try {
      writeFileSync(join(mount, 'data'), 'not ours');
      expect(scratch.finish(false)).toEqual({ kept: true, why: `${scratch.dir} is kept: something is still mounted in it (${mount})` });
      expect(existsSync(join(mount, 'data'))).toBe(true);
    } finally {
      execFileSync('umount', [mount]);
    }
  });
});

describe('mountsUnder', () => {
  const mountinfo = [
    '22 1 8:1 / / rw,relatime - ext4 /dev/sda1 rw',
    '40 22 0:35 / /tmp/run-abc/mnt rw - tmpfs tmpfs rw',
    '41 22 0:36 / /tmp/run-abc\\040with\\040space rw - tmpfs tmpfs rw',
    '42 22 0:37 / /tmp/run-abcdef rw - tmpfs tmpfs rw',
  ].join('\n');

  it('finds mount points inside the directory, unescaping their names, and not those of a sibling sharing its prefix', () => {
    expect(mountsUnder('/tmp/run-abc', mountinfo)).toEqual(['/tmp/run-abc/mnt']);
    expect(mountsUnder('/tmp/run-abc with space', mountinfo)).toEqual(['/tmp/run-abc with space']);
    expect(mountsUnder('/tmp/run-abcdef', mountinfo)).toEqual(['/tmp/run-abcdef']);
  });

  it('reads this process\'s own mounts by default', () => {
    expect(mountsUnder('/')).toContain('/');
  });
});

describe("the workspace's Vitest setup", () => {
  it("gives every test run a scratch directory of its own as the system's temporary directory", () => {
    expect(tmpdir()).toMatch(/\/outrigger-control-plane-[A-Za-z0-9]{6}$/);
    expect(existsSync(tmpdir())).toBe(true);
  });
});
