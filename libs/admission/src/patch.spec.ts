import fc from 'fast-check';
import jsonpatch from 'fast-json-patch';
import { describe, expect, it } from 'vitest';
import type { JsonObject, JsonValue } from './json-value.js';
import { applyPatchCopy, computePatch, decodePatch, encodePatch } from './patch.js';

function mutate(original: JsonObject, change: (copy: JsonObject) => void): JsonObject {
  const copy = structuredClone(original);
  change(copy);
  return copy;
}

describe('computePatch', () => {
  it('escapes keys with / and ~ per RFC 6901 (~ as ~0 first, then / as ~1)', () => {
    const original: JsonObject = { metadata: { annotations: { 'a/b': 'x', 'c~d': 'y' } } };
    const changed = mutate(original, (pod) => {
      const annotations = (pod['metadata'] as JsonObject)['annotations'] as JsonObject;
      annotations['xxl-agent/status'] = 's';
      annotations['odd~/key'] = 'o';
      annotations['~1'] = 'literal tilde-one';
    });
    expect(computePatch(original, changed)).toEqual([
      { op: 'add', path: '/metadata/annotations/xxl-agent~1status', value: 's' },
      { op: 'add', path: '/metadata/annotations/odd~0~1key', value: 'o' },
      { op: 'add', path: '/metadata/annotations/~01', value: 'literal tilde-one' },
    ]);
    expect(applyPatchCopy(original, computePatch(original, changed))).toEqual(changed);
  });

  it('creates a missing annotations map with one add of the whole parent', () => {
    const original: JsonObject = { metadata: { name: 'p' } };
    const changed = mutate(original, (pod) => {
      (pod['metadata'] as JsonObject)['annotations'] = { 'xxl-agent/status': 's' };
    });
    expect(computePatch(original, changed)).toEqual([
      { op: 'add', path: '/metadata/annotations', value: { 'xxl-agent/status': 's' } },
    ]);
  });

  it('creates missing initContainers with one add of the whole list', () => {
    const original: JsonObject = { spec: { containers: [{ name: 'app' }] } };
    const changed = mutate(original, (pod) => {
      (pod['spec'] as JsonObject)['initContainers'] = [{ name: 'agent', restartPolicy: 'Always' }];
    });
    expect(computePatch(original, changed)).toEqual([
      { op: 'add', path: '/spec/initContainers', value: [{ name: 'agent', restartPolicy: 'Always' }] },
    ]);
  });

  it('turns an append into a single add at the old end of the list', () => {
    const original: JsonObject = { spec: { containers: [{ name: 'a' }, { name: 'b' }] } };
    const changed = mutate(original, (pod) => {
      ((pod['spec'] as JsonObject)['containers'] as JsonObject[]).push({ name: 'agent' });
    });
    expect(computePatch(original, changed)).toEqual([{ op: 'add', path: '/spec/containers/2', value: { name: 'agent' } }]);
  });

  it('turns a prepend into replaces of existing containers, which is why the injector only appends', () => {
    const original: JsonObject = { spec: { containers: [{ name: 'a' }, { name: 'b' }] } };
    const changed = mutate(original, (pod) => {
      ((pod['spec'] as JsonObject)['containers'] as JsonObject[]).unshift({ name: 'agent' });
    });
    const ops = computePatch(original, changed).map((op) => op.op);
    expect(ops).toContain('replace');
  });

  it('leaves unknown fields alone: only the change appears in the patch', () => {
    const original: JsonObject = {
      spec: { futureField: { 'x/y': [1, { '~': null }] }, containers: [{ name: 'a', futureContainerField: true }] },
    };
    const changed = mutate(original, (pod) => {
      ((pod['spec'] as JsonObject)['containers'] as JsonObject[]).push({ name: 'agent' });
    });
    const patch = computePatch(original, changed);
    expect(patch).toHaveLength(1);
    expect(applyPatchCopy(original, patch)).toEqual(changed);
  });

  it('removes an item of a named list with one remove, before the adds, each list from its end', () => {
    const token = (name: string) => ({ name, readOnly: true, mountPath: '/var/run/secrets/kubernetes.io/serviceaccount' });
    const original: JsonObject = {
      spec: {
        volumes: [{ name: 'data' }, { name: 'kube-api-access-x' }, { name: 'cache' }],
        containers: [
          { name: 'app', volumeMounts: [{ name: 'data', mountPath: '/data' }, token('kube-api-access-x')] },
          { name: 'sidecar', volumeMounts: [token('kube-api-access-x'), { name: 'cache', mountPath: '/cache' }] },
        ],
      },
    };
    const changed = mutate(original, (pod) => {
      const spec = pod['spec'] as JsonObject;
      spec['volumes'] = [{ name: 'data' }, { name: 'cache' }, { name: 'agent-token' }];
      for (const container of spec['containers'] as JsonObject[]) container['volumeMounts'] = (container['volumeMounts'] as JsonObject[]).filter((m) => m['name'] !== 'kube-api-access-x');
    });
    expect(computePatch(original, changed)).toEqual([
      { op: 'remove', path: '/spec/volumes/1' },
      { op: 'remove', path: '/spec/containers/0/volumeMounts/1' },
      { op: 'remove', path: '/spec/containers/1/volumeMounts/0' },
      { op: 'add', path: '/spec/volumes/2', value: { name: 'agent-token' } },
    ]);
    expect(applyPatchCopy(original, computePatch(original, changed))).toEqual(changed);
  });

  it('tells mounts of one volume apart by their path, and falls back to the index diff for lists without keys', () => {
    const original: JsonObject = { c: { volumeMounts: [{ name: 'v', mountPath: '/a' }, { name: 'v', mountPath: '/b' }, { name: 'w', mountPath: '/c' }] }, plain: [1, 2, 3] };
    const changed = mutate(original, (doc) => {
      const c = doc['c'] as JsonObject;
      c['volumeMounts'] = (c['volumeMounts'] as JsonObject[]).filter((m) => m['mountPath'] !== '/a');
      doc['plain'] = [2, 3];
    });
    const patch = computePatch(original, changed);
    expect(patch[0]).toEqual({ op: 'remove', path: '/c/volumeMounts/0' });
    expect(applyPatchCopy(original, patch)).toEqual(changed);
  });

  it('gives an empty patch when nothing changed', () => {
    const original: JsonObject = { a: { b: [1, 2] } };
    expect(computePatch(original, structuredClone(original))).toEqual([]);
  });
});

describe('encodePatch', () => {
  it('is base64 of the JSON array and decodes back', () => {
    const patch = [{ op: 'add' as const, path: '/metadata/annotations/a~1b', value: 'ü' }];
    const encoded = encodePatch(patch);
    expect(encoded).toMatch(/^[A-Za-z0-9+/]+=*$/);
    expect(JSON.parse(Buffer.from(encoded, 'base64').toString('utf8'))).toEqual(patch);
    expect(decodePatch(encoded)).toEqual(patch);
  });
});

describe('applyPatchCopy', () => {
  it('does not modify its input', () => {
    const original: JsonObject = { a: 1 };
    expect(applyPatchCopy(original, [{ op: 'add', path: '/b', value: 2 }])).toEqual({ a: 1, b: 2 });
    expect(original).toEqual({ a: 1 });
  });

  it('fails on an add whose parent is missing', () => {
    expect(() => applyPatchCopy({ metadata: {} }, [{ op: 'add', path: '/metadata/annotations/x', value: 'y' }])).toThrow();
  });
});

describe('computePatch on any JSON', () => {
  // Objects and lists nested a few levels, keys that need escaping, lists that grow and shrink.
  const objects = (...keys: string[]) => {
    const key = fc.constantFrom('a', 'b', 'x/y', 'm~n', '', ...keys);
    const { value } = fc.letrec<{ value: JsonValue }>((tie) => ({
      value: fc.oneof(
        { depthSize: 'small', withCrossShrink: true },
        fc.oneof(fc.string({ maxLength: 3 }), fc.integer({ min: -2, max: 2 }), fc.boolean(), fc.constant(null)),
        fc.array(tie('value'), { maxLength: 4 }),
        fc.dictionary(key, tie('value'), { maxKeys: 4 }),
      ),
    }));
    return fc.dictionary(key, value, { maxKeys: 5 });
  };

  it('turns the original into the mutated object, named list items too, and leaves both unchanged', () => {
    const object = objects('name', 'mountPath');
    fc.assert(
      fc.property(object, object, (before, after) => {
        const [beforeText, afterText] = [JSON.stringify(before), JSON.stringify(after)];
        expect(applyPatchCopy(before, computePatch(before, after))).toEqual(after);
        expect([JSON.stringify(before), JSON.stringify(after)]).toEqual([beforeText, afterText]);
      }),
      { numRuns: 2000 },
    );
  });

  it('writes the operations fast-json-patch would where no list has named items', () => {
    const object = objects();
    fc.assert(
      fc.property(object, object, (before, after) => {
        expect(computePatch(before, after)).toEqual(jsonpatch.compare(before, after));
      }),
      { numRuns: 2000 },
    );
  });
});
