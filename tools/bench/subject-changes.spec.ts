import { describe, expect, it } from 'vitest';
import { settle, type PendingChange } from './subject-changes.js';

describe('settle', () => {
  it('settles additions present and removals absent, and keeps the rest pending', () => {
    const pending = new Map<string, PendingChange>([
      ['a', { namespace: 'a', present: true, requested: 100, answered: 150 }],
      ['b', { namespace: 'b', present: false, requested: 200 }],
      ['c', { namespace: 'c', present: true, requested: 300 }],
      ['d', { namespace: 'd', present: false, requested: 400, answered: 700 }],
    ]);
    const settled = settle(pending, new Set(['a', 'd']), 1000);
    expect(settled).toEqual([
      { fromRequest: 900, fromAnswer: 850 },
      { fromRequest: 800, fromAnswer: 0 }, // shown before the bench saw the answer
    ]);
    expect([...pending.keys()]).toEqual(['c', 'd']);
  });

  it('returns nothing when nothing is pending', () => {
    expect(settle(new Map(), new Set(['a']), 5)).toEqual([]);
  });
});
