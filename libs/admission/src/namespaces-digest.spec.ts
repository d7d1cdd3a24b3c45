import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { namespacesDigest } from './namespaces-digest.js';

const held = fc.uniqueArray(fc.record({ name: fc.stringMatching(/^[a-z][a-z0-9-]{0,20}$/), resourceVersion: fc.stringMatching(/^[1-9][0-9]{0,8}$/) }), { selector: (n) => n.name });

describe('namespacesDigest', () => {
  it('does not depend on the order the namespaces are held in', () => {
    fc.assert(fc.property(held, fc.infiniteStream(fc.nat()), (namespaces, keys) => {
        const shuffled = namespaces.map((n) => ({ n, key: keys.next().value })).sort((a, b) => a.key - b.key).map(({ n }) => n);
        expect(namespacesDigest(shuffled)).toBe(namespacesDigest(namespaces));
      }));
  });

  it('changes when a namespace is added, dropped or held at another resourceVersion', () => {
    const shop = { name: 'shop', resourceVersion: '10' };
    const batch = { name: 'batch', resourceVersion: '11' };
    const two = [shop, batch];
    const digests = new Set([
      namespacesDigest(two),
      namespacesDigest([batch]),
      namespacesDigest([...two, { name: 'more', resourceVersion: '12' }]),
      namespacesDigest([{ ...shop, resourceVersion: '13' }, batch]),
      namespacesDigest([]),
    ]);
    expect(digests.size).toBe(5);
  });

  it('cannot be matched by moving the separator between name and resourceVersion', () => {
    expect(namespacesDigest([{ name: 'a1', resourceVersion: '2' }])).not.toBe(namespacesDigest([{ name: 'a', resourceVersion: '12' }]));
  });
});
