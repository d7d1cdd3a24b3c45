import { describe, expect, it } from 'vitest';
import { EventSpamFilter } from './event-spam-filter.js';

describe('EventSpamFilter', () => {
  it('lets `burst` Events through per object, then one per refill, each object apart', () => {
    let now = 0;
    const filter = new EventSpamFilter({ burst: 3, refillMs: 1_000, maxObjects: 10, now: () => now });
    expect([1, 2, 3, 4].map(() => filter.allow('a'))).toEqual([true, true, true, false]);
    expect(filter.allow('b')).toBe(true);
    now = 999;
    expect(filter.allow('a')).toBe(false);
    now = 1_000;
    expect([filter.allow('a'), filter.allow('a')]).toEqual([true, false]);
    now = 100_000;
    expect([1, 2, 3, 4].map(() => filter.allow('a'))).toEqual([true, true, true, false]);
  });

  it('keeps at most maxObjects buckets, forgetting the least recently used', () => {
    const filter = new EventSpamFilter({ burst: 1, refillMs: 1_000_000, maxObjects: 2, now: () => 0 });
    expect([filter.allow('a'), filter.allow('b'), filter.allow('a')]).toEqual([true, true, false]);
    expect(filter.allow('c')).toBe(true); // b, least recently used, goes
    expect([filter.allow('a'), filter.allow('b')]).toEqual([false, true]);
  });
});
