import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FNV_OFFSET_BASIS, hashString, SharedInstances } from './shared-instances.js';

describe('SharedInstances', () => {
  const byName = () => new SharedInstances<{ name: string }>((v) => v.name);

  it('hands out the first instance of a key until its last holder releases it', () => {
    const shared = byName();
    const first = { name: 'x' };
    expect(shared.hold(first)).toBe(first);
    expect(shared.hold({ name: 'x' })).toBe(first);
    shared.release({ name: 'x' });
    expect(shared.hold({ name: 'x' })).toBe(first);
    shared.release(first);
    shared.release(first);
    const fresh = { name: 'x' };
    expect(shared.hold(fresh)).toBe(fresh);
  });

  it('tells apart keys whose hashes collide', () => {
    // Two names with one FNV-1a hash from the standard basis, found by search.
    expect(hashString('sa-562789')).toBe(hashString('sa-779192'));
    expect(hashString('sa-562789', 7)).not.toBe(hashString('sa-779192', 7));
    const shared = new SharedInstances<{ name: string }>((v) => v.name, FNV_OFFSET_BASIS);
    const a = { name: 'sa-562789' };
    const b = { name: 'sa-779192' };
    expect(shared.hold(a)).toBe(a);
    expect(shared.hold(b)).toBe(b);
    expect(shared.hold({ name: 'sa-779192' })).toBe(b);
    shared.release(a);
    expect(shared.hold({ name: 'sa-779192' })).toBe(b);
    const again = { name: 'sa-562789' };
    expect(shared.hold(again)).toBe(again);
  });

  it('ignores a release of what it does not hold', () => {
    const shared = byName();
    const a = { name: 'a' };
    shared.hold(a);
    shared.release({ name: 'b' });
    expect(shared.hold({ name: 'a' })).toBe(a);
  });

  it('behaves as a Map of key to instance and holder count, whatever the order of holds and releases', () => {
    // `instance`: pass the instance held for the name, if any (as the store does), not an equal copy.
    const op = fc.record({ hold: fc.boolean(), instance: fc.boolean(), name: fc.constantFrom('sa-562789', 'sa-779192', 'a', 'b') });
    fc.assert(
      fc.property(fc.array(op, { maxLength: 60 }), (ops) => {
        const shared = byName();
        const model = new Map<string, { value: { name: string }; refs: number }>();
        const released = new Set<{ name: string }>();
        for (const { hold, instance, name } of ops) {
          const known = model.get(name)?.value;
          const back = [...released].find((v) => v.name === name);
          const value = (instance && (known ?? back)) || { name };
          released.delete(value);
          if (hold) {
            const held = model.get(name) ?? { value, refs: 0 };
            held.refs++;
            model.set(name, held);
            expect(shared.hold(value)).toBe(held.value);
          } else {
            shared.release(value);
            const held = model.get(name);
            if (held && --held.refs === 0) {
              model.delete(name);
              released.add(held.value); // a released instance may come back, and must start over
            }
          }
        }
      }),
    );
  });
});
