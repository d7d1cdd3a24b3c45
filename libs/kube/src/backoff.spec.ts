import { describe, expect, it } from 'vitest';
import { Backoff, backoffDelay } from './backoff.js';

describe('backoffDelay', () => {
  it('doubles from the base and stops at the max', () => {
    const delays = [0, 1, 2, 3, 4, 5, 10].map((attempt) => backoffDelay(attempt, { baseMs: 100, maxMs: 1_000 }));
    expect(delays).toEqual([100, 200, 400, 800, 1_000, 1_000, 1_000]);
  });

  it('uses the given growth factor', () => {
    expect(backoffDelay(2, { baseMs: 10, maxMs: 1_000, factor: 3 })).toBe(90);
  });

  it('jitters downwards within the given fraction', () => {
    const options = { baseMs: 1_000, maxMs: 1_000, jitter: 0.5 };
    expect(backoffDelay(0, { ...options, random: () => 0 })).toBe(1_000);
    expect(backoffDelay(0, { ...options, random: () => 0.999999 })).toBeCloseTo(500, 0);
    for (let i = 0; i < 100; i++) {
      const delay = backoffDelay(0, options);
      expect(delay).toBeGreaterThan(500);
      expect(delay).toBeLessThanOrEqual(1_000);
    }
  });

  it('does not overflow for huge attempt counts', () => {
    expect(backoffDelay(10_000, { baseMs: 1, maxMs: 30_000 })).toBe(30_000);
  });
});

describe('Backoff', () => {
  it('grows with each failure and starts over after reset', () => {
    const backoff = new Backoff({ baseMs: 1, maxMs: 100 });
    expect([backoff.next(), backoff.next(), backoff.next()]).toEqual([1, 2, 4]);
    expect(backoff.attempts).toBe(3);
    backoff.reset();
    expect(backoff.next()).toBe(1);
  });
});
