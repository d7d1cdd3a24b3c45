import { describe, expect, it } from 'vitest';
import { type ControllerLookup, type OwnerRef, resolveWorkload } from './workload-owner.js';

const rs = (name: string): OwnerRef => ({ apiVersion: 'apps/v1', kind: 'ReplicaSet', name });
const job = (name: string): OwnerRef => ({ apiVersion: 'batch/v1', kind: 'Job', name });

/** Controllers of ReplicaSets and Jobs as a map; counts the lookups made. */
function lookupOf(parents: Record<string, OwnerRef | undefined>): ControllerLookup & { calls: string[] } {
  const calls: string[] = [];
  const lookup = async (namespace: string, owner: OwnerRef) => {
    calls.push(`${namespace}/${owner.kind}/${owner.name}`);
    return parents[owner.name];
  };
  return Object.assign(lookup, { calls });
}

describe('resolveWorkload', () => {
  it('follows a ReplicaSet to its Deployment and a Job to its CronJob', async () => {
    const lookup = lookupOf({ 'web-7d9': { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, 'nightly-2911': { apiVersion: 'batch/v1', kind: 'CronJob', name: 'nightly' } });
    expect(await resolveWorkload('shop', 'web-7d9-abc', rs('web-7d9'), lookup)).toEqual({ kind: 'Deployment', namespace: 'shop', name: 'web', apiVersion: 'apps/v1', known: true });
    expect(await resolveWorkload('shop', 'nightly-2911-x', job('nightly-2911'), lookup)).toEqual({ kind: 'CronJob', namespace: 'shop', name: 'nightly', apiVersion: 'batch/v1', known: true });
    expect(lookup.calls).toEqual(['shop/ReplicaSet/web-7d9', 'shop/Job/nightly-2911']);
  });

  it('names StatefulSets and DaemonSets directly, without a lookup', async () => {
    const lookup = lookupOf({});
    expect(await resolveWorkload('db', 'pg-0', { apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'pg' }, lookup)).toMatchObject({ kind: 'StatefulSet', name: 'pg', known: true });
    expect(await resolveWorkload('ops', 'agent-x1', { apiVersion: 'apps/v1', kind: 'DaemonSet', name: 'agent' }, lookup)).toMatchObject({ kind: 'DaemonSet', name: 'agent', known: true });
    expect(lookup.calls).toEqual([]);
  });

  it('keeps a ReplicaSet or Job that nothing owns (or whose owner is gone) as the workload', async () => {
    const lookup = lookupOf({});
    expect(await resolveWorkload('shop', 'lone-abc', rs('lone'), lookup)).toMatchObject({ kind: 'ReplicaSet', name: 'lone', known: true });
    expect(await resolveWorkload('shop', 'once-x', job('once'), lookup)).toMatchObject({ kind: 'Job', name: 'once', known: true });
  });

  it('a pod without a controller is a bare pod, named after itself', async () => {
    expect(await resolveWorkload('shop', 'debug', undefined, lookupOf({}))).toEqual({ kind: 'Pod', namespace: 'shop', name: 'debug', apiVersion: 'v1', known: true });
  });

  it('reports other controllers as they are, marked unknown: directly, or behind a ReplicaSet (Argo Rollouts)', async () => {
    const lookup = lookupOf({ 'canary-5f': { apiVersion: 'argoproj.io/v1alpha1', kind: 'Rollout', name: 'canary' } });
    expect(await resolveWorkload('shop', 'x', { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'CloneSet', name: 'clones' }, lookup)).toEqual({ kind: 'CloneSet', namespace: 'shop', name: 'clones', apiVersion: 'apps.kruise.io/v1alpha1', known: false });
    expect(await resolveWorkload('shop', 'y', rs('canary-5f'), lookup)).toEqual({ kind: 'Rollout', namespace: 'shop', name: 'canary', apiVersion: 'argoproj.io/v1alpha1', known: false });
    // A kind named like ours in another group is not ours.
    expect(await resolveWorkload('shop', 'z', { apiVersion: 'example.com/v1', kind: 'StatefulSet', name: 'fake' }, lookup)).toMatchObject({ kind: 'StatefulSet', known: false });
  });
});
