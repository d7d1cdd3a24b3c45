import { describe, expect, it } from 'vitest';
import { controllerOf } from './owner-reference.js';

const rs = { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-7d9', uid: 'u-1' };

describe('controllerOf', () => {
  it('takes the owner reference marked controller, not the first one', () => {
    const pod = { metadata: { ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'keeper', uid: 'u-0' }, { ...rs, controller: true, blockOwnerDeletion: true }] } };
    expect(controllerOf(pod)).toEqual(rs);
  });

  it('is undefined for an object without a controller, or with malformed references', () => {
    expect(controllerOf({ metadata: {} })).toBeUndefined();
    expect(controllerOf({ metadata: { ownerReferences: 'x' } })).toBeUndefined();
    expect(controllerOf({ metadata: { ownerReferences: [rs] } })).toBeUndefined();
    expect(controllerOf({ metadata: { ownerReferences: [null, { kind: 'ReplicaSet', name: 'x', controller: true }] } })).toBeUndefined();
    expect(controllerOf({ metadata: { ownerReferences: [{ ...rs, uid: 7, controller: true }] } })).toBeUndefined();
    expect(controllerOf(undefined)).toBeUndefined();
  });
});
