import { mkdtempSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { mayConcern, watchFiles } from './file-watch.js';

describe('mayConcern', () => {
  const names = new Set(['tls.crt', 'tls.key']);

  it('accepts the watched files, the atomic writer entries and unnamed events', () => {
    for (const name of ['tls.crt', 'tls.key', '..data', '..data_tmp', '..2026_11_23_18_00_00.123456789', null]) {
      expect(mayConcern(name, names), String(name)).toBe(true);
    }
  });

  it('ignores other entries in the same directory', () => {
    for (const name of ['injector.log', '.tls.crt.swp', 'tls.crt~', 'ca.crt']) expect(mayConcern(name, names), name).toBe(false);
  });
});

describe('watchFiles', () => {
  let stop: (() => void) | undefined;
  let dir: string | undefined;
  afterEach(() => {
    stop?.();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const settle = () => new Promise((resolve) => setTimeout(resolve, 200));
  const firstCall = (calls: string[]) =>
    new Promise<void>((resolve) => {
      const check = setInterval(() => calls.length > 0 && (clearInterval(check), resolve()), 10);
    });

  it('is not woken by other files in the directory, and is by a write to a watched file', async () => {
    dir = mkdtempSync(join(tmpdir(), 'file-watch-'));
    writeFileSync(join(dir, 'tls.crt'), 'one');
    const calls: string[] = [];
    let phase = 'unrelated writes';
    stop = watchFiles([join(dir, 'tls.crt')], 3_600_000, () => calls.push(phase));
    for (let i = 0; i < 20; i++) writeFileSync(join(dir, 'injector.log'), `line ${i}\n`, { flag: 'a' });
    await settle();
    phase = 'watched write';
    writeFileSync(join(dir, 'tls.crt'), 'two');
    await firstCall(calls);
    expect(new Set(calls)).toEqual(new Set(['watched write']));
  });

  it('is woken by a kubelet-style symlink swap of ..data', async () => {
    dir = mkdtempSync(join(tmpdir(), 'file-watch-'));
    writeFileSync(join(dir, 'v1'), 'one');
    writeFileSync(join(dir, 'v2'), 'two');
    symlinkSync('v1', join(dir, '..data'));
    symlinkSync('..data', join(dir, 'tls.crt'));
    const calls: string[] = [];
    stop = watchFiles([join(dir, 'tls.crt')], 3_600_000, () => calls.push('swap'));
    symlinkSync('v2', join(dir, '..data_tmp'));
    renameSync(join(dir, '..data_tmp'), join(dir, '..data'));
    await firstCall(calls);
    expect(calls[0]).toBe('swap');
  });
});
