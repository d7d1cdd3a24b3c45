import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { NAMESPACES_HELD_ANNOTATIONS, namespacesHeldAnnotations, namespacesHeldFrom } from './held-namespaces.js';
import { namespacesDigest } from './namespaces-digest.js';

describe('namespaces held, as Lease annotations', () => {
  it('reads back every view it writes', () => {
    fc.assert(
      fc.property(fc.nat(), fc.array(fc.tuple(fc.string(), fc.string())), (held, namespaces) => {
        const view = { held, digest: namespacesDigest(namespaces.map(([name, resourceVersion]) => ({ name, resourceVersion }))) };
        expect(namespacesHeldFrom(namespacesHeldAnnotations(view))).toEqual(view);
      }),
    );
  });

  it('reads nothing from annotations that are missing or not its own form', () => {
    const digest = namespacesDigest([]);
    expect(namespacesHeldFrom(undefined)).toBeUndefined();
    expect(namespacesHeldFrom({ [NAMESPACES_HELD_ANNOTATIONS.digest]: digest })).toBeUndefined();
    expect(namespacesHeldFrom({ [NAMESPACES_HELD_ANNOTATIONS.held]: '3' })).toBeUndefined();
    for (const held of ['', '-1', '1.5', '03', 'three']) expect(namespacesHeldFrom({ [NAMESPACES_HELD_ANNOTATIONS.held]: held, [NAMESPACES_HELD_ANNOTATIONS.digest]: digest })).toBeUndefined();
    for (const bad of ['', 'ABCDEF0123456789', `${digest}0`]) expect(namespacesHeldFrom({ [NAMESPACES_HELD_ANNOTATIONS.held]: '1', [NAMESPACES_HELD_ANNOTATIONS.digest]: bad })).toBeUndefined();
  });
});
