import { describe, expect, it } from 'vitest';
import type { JsonObject } from './json-value.js';
import { assertOwnedOps, findUnownedOps, mergeOwnedPaths, UnownedPatchError, type OwnedPaths } from './owned-paths.js';
import type { PatchOperation } from './patch.js';

const OWNED: OwnedPaths = {
  members: ['/metadata/annotations/xxl-agent~1status'],
  appendable: ['/spec/containers', '/spec/initContainers'],
  creatable: ['/metadata', '/metadata/annotations', '/spec/initContainers'],
};

const pod: JsonObject = {
  metadata: { name: 'p', annotations: { 'xxl-agent/enable': 'true' } },
  spec: { containers: [{ name: 'app' }, { name: 'db' }] },
};

function problems(ops: PatchOperation[], original: JsonObject = pod): string[] {
  return findUnownedOps(ops, OWNED, original);
}

describe('findUnownedOps', () => {
  it('accepts the status annotation, appends, and creating initContainers', () => {
    expect(
      problems([
        { op: 'add', path: '/spec/containers/2', value: { name: 'agent' } },
        { op: 'add', path: '/spec/containers/3', value: { name: 'agent-2' } },
        { op: 'add', path: '/spec/initContainers', value: [{ name: 'native' }] },
        { op: 'add', path: '/metadata/annotations/xxl-agent~1status', value: '{}' },
        { op: 'replace', path: '/metadata/annotations/xxl-agent~1status', value: '{}' },
      ]),
    ).toEqual([]);
  });

  it('accepts creating annotations (and metadata) that hold only owned members', () => {
    const bare: JsonObject = { spec: { containers: [] } };
    expect(problems([{ op: 'add', path: '/metadata', value: { annotations: { 'xxl-agent/status': 's' } } }], bare)).toEqual([]);
    expect(problems([{ op: 'add', path: '/metadata/annotations', value: { 'xxl-agent/status': 's' } }], { metadata: {} })).toEqual([]);
  });

  it('rejects removes, moves, copies and tests', () => {
    expect(
      problems([
        { op: 'remove', path: '/metadata/annotations/xxl-agent~1enable' },
        { op: 'move', from: '/spec/containers/0', path: '/spec/containers/1' },
        { op: 'copy', from: '/spec/containers/0', path: '/spec/containers/2' },
        { op: 'test', path: '/metadata/name', value: 'p' },
      ]),
    ).toEqual([
      'remove /metadata/annotations/xxl-agent~1enable: remove of a path the injector does not own',
      'move /spec/containers/1: move is never allowed',
      'copy /spec/containers/2: copy is never allowed',
      'test /metadata/name: test is never allowed',
    ]);
  });

  it('rejects replacing anything it does not own', () => {
    expect(problems([{ op: 'replace', path: '/spec/containers/0', value: { name: 'evil' } }])).toEqual([
      'replace /spec/containers/0: replace of a path the injector does not own',
    ]);
    expect(problems([{ op: 'replace', path: '/metadata/annotations/xxl-agent~1enable', value: 'false' }])).toHaveLength(1);
  });

  it('rejects an insert before the end of a list', () => {
    expect(problems([{ op: 'add', path: '/spec/containers/0', value: { name: 'agent' } }])).toEqual([
      'add /spec/containers/0: not an append (expected index 2)',
    ]);
    expect(problems([{ op: 'add', path: '/spec/containers/-', value: { name: 'agent' } }])).toHaveLength(1);
  });

  it('rejects overwriting an existing parent with add', () => {
    expect(problems([{ op: 'add', path: '/metadata/annotations', value: { 'xxl-agent/status': 's' } }])).toEqual([
      'add /metadata/annotations: would overwrite an existing value',
    ]);
  });

  it('rejects a created parent carrying members it does not own', () => {
    expect(problems([{ op: 'add', path: '/metadata/annotations', value: { 'xxl-agent/status': 's', other: 'x' } }], { metadata: {} })).toEqual([
      'add /metadata/annotations: creates /metadata/annotations/other, which the injector does not own',
    ]);
  });

  it('rejects adds outside the owned paths, including escaped look-alikes', () => {
    expect(problems([{ op: 'add', path: '/metadata/labels', value: {} }])).toHaveLength(1);
    expect(problems([{ op: 'add', path: '/metadata/annotations/xxl-agent/status', value: 's' }])).toHaveLength(1);
    expect(problems([{ op: 'add', path: '/spec/volumes', value: [] }])).toHaveLength(1);
    expect(problems([{ op: 'add', path: '/spec/initContainers/0', value: {} }])).toEqual([
      'add /spec/initContainers/0: append to a list that does not exist',
    ]);
  });
});

describe('findUnownedOps with removable items', () => {
  const owned: OwnedPaths = {
    ...OWNED,
    appendable: [...OWNED.appendable, '/spec/volumes'],
    removable: [
      { list: '/spec/volumes', namePrefix: 'kube-api-access-' },
      { list: '/spec/containers/*/volumeMounts', namePrefix: 'kube-api-access-' },
    ],
  };
  const token = { name: 'kube-api-access-x', mountPath: '/var/run/secrets/kubernetes.io/serviceaccount' };
  const withToken: JsonObject = {
    spec: {
      volumes: [{ name: 'data' }, { name: 'kube-api-access-x' }, { name: 'kube-api-access-y' }],
      containers: [{ name: 'app', volumeMounts: [{ name: 'data', mountPath: '/data' }, token] }],
    },
  };
  const check = (ops: PatchOperation[]) => findUnownedOps(ops, owned, withToken);

  it('accepts removing the named items from the end down, then appending where the list now ends', () => {
    expect(
      check([
        { op: 'remove', path: '/spec/containers/0/volumeMounts/1' },
        { op: 'remove', path: '/spec/volumes/2' },
        { op: 'remove', path: '/spec/volumes/1' },
        { op: 'add', path: '/spec/volumes/1', value: { name: 'agent-token' } },
      ]),
    ).toEqual([]);
  });

  it('refuses removing other items, other lists, out of order, after an append, or a whole list', () => {
    expect(check([{ op: 'remove', path: '/spec/volumes/0' }])).toEqual(['remove /spec/volumes/0: removes an item not named kube-api-access-*']);
    expect(check([{ op: 'remove', path: '/spec/containers/0/volumeMounts/0' }])).toEqual(['remove /spec/containers/0/volumeMounts/0: removes an item not named kube-api-access-*']);
    expect(check([{ op: 'remove', path: '/spec/containers/0' }])).toEqual(['remove /spec/containers/0: remove of a path the injector does not own']);
    expect(check([{ op: 'remove', path: '/spec/volumes' }])).toEqual(['remove /spec/volumes: remove of a path the injector does not own']);
    expect(check([{ op: 'remove', path: '/spec/initContainers/0/volumeMounts/1' }])).toHaveLength(1);
    expect(check([{ op: 'remove', path: '/spec/volumes/1' }, { op: 'remove', path: '/spec/volumes/2' }])).toEqual([
      'remove /spec/volumes/2: removes must go from the end of the list down, before any append',
    ]);
    expect(check([{ op: 'add', path: '/spec/volumes/3', value: { name: 'v' } }, { op: 'remove', path: '/spec/volumes/1' }])).toEqual([
      'remove /spec/volumes/1: removes must go from the end of the list down, before any append',
    ]);
    expect(check([{ op: 'remove', path: '/spec/volumes/1' }, { op: 'add', path: '/spec/volumes/3', value: { name: 'v' } }])).toEqual([
      'add /spec/volumes/3: not an append (expected index 2)',
    ]);
  });

  it('is kept by mergeOwnedPaths, once', () => {
    expect(mergeOwnedPaths([owned, owned]).removable).toEqual(owned.removable);
    expect(mergeOwnedPaths([OWNED])).not.toHaveProperty('removable');
  });
});

describe('assertOwnedOps', () => {
  it('throws UnownedPatchError listing every violation', () => {
    const ops: PatchOperation[] = [
      { op: 'remove', path: '/spec/containers/0' },
      { op: 'add', path: '/spec/hostNetwork', value: true },
    ];
    expect(() => assertOwnedOps(ops, OWNED, pod)).toThrow(UnownedPatchError);
    try {
      assertOwnedOps(ops, OWNED, pod);
    } catch (error) {
      expect((error as UnownedPatchError).violations).toHaveLength(2);
    }
  });

  it('passes silently for an empty patch', () => {
    expect(() => assertOwnedOps([], OWNED, pod)).not.toThrow();
  });
});

describe('mergeOwnedPaths', () => {
  it('unions and de-duplicates', () => {
    expect(mergeOwnedPaths([OWNED, { members: ['/x'], appendable: ['/spec/containers'], creatable: [] }])).toEqual({
      members: ['/metadata/annotations/xxl-agent~1status', '/x'],
      appendable: ['/spec/containers', '/spec/initContainers'],
      creatable: ['/metadata', '/metadata/annotations', '/spec/initContainers'],
    });
  });
});
