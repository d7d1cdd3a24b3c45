import { describe, expect, it } from 'vitest';
import { inParallel } from './in-parallel.js';

describe('inParallel', () => {
  it('runs every item, never more than the width at once', async () => {
    let running = 0;
    let most = 0;
    const done: number[] = [];
    await inParallel([1, 2, 3, 4, 5, 6, 7], 3, async (n) => {
      most = Math.max(most, ++running);
      await new Promise((r) => setTimeout(r, 5));
      running--;
      done.push(n);
    });
    expect(done.sort()).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(most).toBe(3);
  });

  it('throws the first failure once those in flight are done, and starts no more', async () => {
    const started: number[] = [];
    const run = inParallel([1, 2, 3, 4, 5], 2, async (n) => {
      started.push(n);
      if (n === 2) throw new Error('two failed');
      await new Promise((r) => setTimeout(r, 5));
    });
    await expect(run).rejects.toThrow('two failed');
    expect(started).toEqual([1, 2]);
  });
});
