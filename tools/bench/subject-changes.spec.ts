import { describe, expect, it } from 'vitest';
import { settle, type PendingChange } from './subject-changes.js';

describe('settle', () => {
  it('settles additions present and removals absent, and keeps the rest pending', () => {
    const pending = new Map<string, PendingChange>([
      ['a', { namespace: 'a', present: true, at: 100 }],
      ['b', { namespace: 'b', present: false, at: 200 }],
      ['c', { namespace: 'c', present: true, at: 300 }],
      ['d', { namespace: 'd', present: false, at: 400 }],
    ]);
    const latencies = settle(pending, new Set(['a', 'd']), 1000);
    expect(latencies.sort((x, y) => x - y)).toEqual([800, 900]);
    expect([...pending.keys()]).toEqual(['c', 'd']);
  });

  it('returns nothing when nothing is pending', () => {
    expect(settle(new Map(), new Set(['a']), 5)).toEqual([]);
  });
});
