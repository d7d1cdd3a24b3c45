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

  it('is undefined for a controller that could name no object: what an object\'s author writes is kept only within the API\'s own bounds', () => {
    const controller = (change: Partial<Record<'apiVersion' | 'kind' | 'name' | 'uid', string>>) => controllerOf({ metadata: { ownerReferences: [{ ...rs, ...change, controller: true }] } });
    expect(controller({ apiVersion: 'v1', kind: 'Pod', uid: '0b6d1e7c-5d0f-4c5e-9f7a-1c2d3e4f5a6b' })).toBeDefined();
    expect(controller({ apiVersion: 'batch.tutorial.kubebuilder.io/v1', kind: 'CronJob' })).toBeDefined();
    for (const change of <Partial<Record<'apiVersion' | 'kind' | 'name' | 'uid', string>>[]>[{ name: 'x'.repeat(254) }, { name: 'a/b' }, { name: '..' }, { name: '' }, { uid: 'u'.repeat(129) }, { uid: 'u 1' }, { kind: 'Replica Set' }, { kind: 'K'.repeat(64) }, { apiVersion: 'apps/' }, { apiVersion: `${'g'.repeat(300)}/v1` }, { name: 'n'.repeat(1_000_000) }]) {
      expect(controller(change), JSON.stringify(change).slice(0, 80)).toBeUndefined();
    }
  });
});
