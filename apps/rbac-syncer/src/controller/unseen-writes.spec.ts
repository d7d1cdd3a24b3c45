import { describe, expect, it } from 'vitest';
import type { ObservedBinding } from '../plan/observed-profile.js';
import { crb } from '../plan/testing/observed.js';
import { type BindingWrite, UnseenWrites } from './unseen-writes.js';

const KEY = 'ns-a';
const at = (binding: ObservedBinding, resourceVersion: string): ObservedBinding => ({ ...binding, resourceVersion });
const written = (binding: ObservedBinding, from: string | undefined): BindingWrite => ({ kind: binding.kind, name: binding.name, namespace: binding.namespace, from });

describe('UnseenWrites', () => {
  const binding = crb('a', ['x']);

  it('keeps a key waiting while the view shows the version its write was planned from, and lets it go once the watch shows the write', () => {
    const unseen = new UnseenWrites(10_000);
    unseen.record(KEY, [written(binding, '7')], 1_000);
    expect(unseen.waitMs(KEY, [at(binding, '7')], 1_500)).toBe(9_500);
    expect(unseen.waitMs(KEY, [at(binding, '9')], 1_600)).toBe(0);
    // Forgotten once seen: an older view later does not hold the key again.
    expect(unseen.waitMs(KEY, [at(binding, '7')], 1_700)).toBe(0);
  });

  it('waits for a create until the watch shows the binding, and for a delete until it shows it gone', () => {
    const unseen = new UnseenWrites(10_000);
    unseen.record(KEY, [written(binding, undefined)], 0);
    expect(unseen.waitMs(KEY, [], 10)).toBeGreaterThan(0);
    expect(unseen.waitMs(KEY, [at(binding, '3')], 20)).toBe(0);
    unseen.record(KEY, [written(binding, '3')], 30);
    expect(unseen.waitMs(KEY, [at(binding, '3')], 40)).toBeGreaterThan(0);
    expect(unseen.waitMs(KEY, [], 50)).toBe(0);
  });

  it('plans a key anyway once the wait runs out, and forgets it (the version precondition still refuses a stale write)', () => {
    const unseen = new UnseenWrites(10_000);
    unseen.record(KEY, [written(binding, '7')], 0);
    expect(unseen.waitMs(KEY, [at(binding, '7')], 10_000)).toBe(0);
    expect(unseen.waitMs(KEY, [at(binding, '7')], 10_001)).toBe(0);
  });

  it('tells RoleBindings of one name apart by namespace, and keys apart', () => {
    const unseen = new UnseenWrites(10_000);
    const inA: ObservedBinding = { ...binding, kind: 'RoleBinding', namespace: 'a', resourceVersion: '5' };
    const inB: ObservedBinding = { ...inA, namespace: 'b', resourceVersion: '6' };
    unseen.record(KEY, [written(inA, '5')], 0);
    expect(unseen.waitMs(KEY, [inB, inA], 1)).toBeGreaterThan(0);
    expect(unseen.waitMs('other', [inB, inA], 1)).toBe(0);
    expect(unseen.waitMs(KEY, [inB, { ...inA, resourceVersion: '8' }], 2)).toBe(0);
  });

  it('waits for every write of a plan, and nothing is recorded for a plan that wrote nothing', () => {
    const unseen = new UnseenWrites(10_000);
    const other = crb('b', ['y']);
    unseen.record(KEY, [written(binding, '1'), written(other, '2')], 0);
    expect(unseen.waitMs(KEY, [at(binding, '4'), at(other, '2')], 1)).toBeGreaterThan(0);
    unseen.record(KEY, [], 2);
    expect(unseen.waitMs(KEY, [at(binding, '1')], 3)).toBe(0);
    unseen.record(KEY, [written(binding, '1')], 4);
    unseen.clear();
    expect(unseen.waitMs(KEY, [at(binding, '1')], 5)).toBe(0);
  });
});
