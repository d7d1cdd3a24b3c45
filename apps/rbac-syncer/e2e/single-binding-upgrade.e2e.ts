import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RbacAuthorizationV1Api, type KubeConfig } from '@kubernetes/client-node';
import { MANAGED_BY_LABEL, MANAGED_BY_VALUE, PROFILE_LABEL, referenceProfile, REVOKED_ANNOTATION } from '@outrigger/agent-profiles';
import { createTestNamespace, freePort, kubeConfigFrom, type ManagedProcess } from '@outrigger/control-plane';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createPod, deleteAllPods, eventually, LABELS, metric, sa, startSyncer, writeProfiles } from './support.js';

// An install upgraded from a version that bound every namespace's ServiceAccounts in one
// ClusterRoleBinding: the built syncer finds that binding and moves its subjects into one binding
// per namespace, with no moment where a ServiceAccount with a live agent is bound by neither.
const suffix = randomBytes(3).toString('hex');
const BINDING = `xxl-agent-exec-${suffix}`;
const PROFILE = referenceProfile().name;
const dir = mkdtempSync(join(tmpdir(), 'rbac-syncer-upgrade-e2e-'));

let kc: KubeConfig;
let rbac: RbacAuthorizationV1Api;
const syncers: ManagedProcess[] = [];
let foreign: string | undefined;

/** Every ServiceAccount bound by this suite's bindings, the earlier version's and the per-namespace ones. */
async function boundAnywhere(): Promise<{ single: string[] | undefined; perNamespace: Map<string, string[]>; listing: number }> {
  const list = await rbac.listClusterRoleBinding({ labelSelector: `${MANAGED_BY_LABEL}=${MANAGED_BY_VALUE}` });
  const subjects = (b: (typeof list.items)[number]) => (b.subjects ?? []).map((s) => sa(s.namespace ?? '', s.name));
  const single = list.items.find((b) => b.metadata?.name === BINDING);
  const ours = list.items.filter((b) => b.metadata?.name?.startsWith(`${BINDING}.`));
  const perNamespace = new Map(ours.map((b) => [b.metadata?.name ?? '', subjects(b)]));
  // Bindings still listing revoked ServiceAccounts for the exec guard: each is written again when its list runs out.
  const listing = [...ours, ...(single ? [single] : [])].filter((b) => b.metadata?.annotations?.[REVOKED_ANNOTATION] !== undefined).length;
  return { single: single ? subjects(single) : undefined, perNamespace, listing };
}

/** The binding an earlier version wrote: every namespace's ServiceAccounts, `[namespace, name]`, in one. */
async function singleBinding(subjects: readonly (readonly [namespace: string, name: string])[]): Promise<void> {
  await rbac.createClusterRoleBinding({
    body: {
      metadata: { name: BINDING, labels: { [MANAGED_BY_LABEL]: MANAGED_BY_VALUE, [PROFILE_LABEL]: PROFILE } },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: BINDING },
      subjects: subjects.map(([namespace, name]) => ({ kind: 'ServiceAccount', namespace, name })),
    },
  });
}

const profilePlans = (port: number) => metric(port, 'outrigger_rbac_syncer_planned_subjects_count', ['scope="profile"']);

describe('rbac-syncer upgraded from one binding for every namespace', () => {
  beforeAll(async () => {
    kc = kubeConfigFrom(inject('controlPlane').kubeconfigPath);
    rbac = kc.makeApiClient(RbacAuthorizationV1Api);
  });

  afterAll(async () => {
    await Promise.all(syncers.map((s) => s.stop()));
    const left = await rbac.listClusterRoleBinding({ labelSelector: `${PROFILE_LABEL}=${PROFILE}` });
    for (const b of left.items) if (b.metadata?.name?.startsWith(BINDING)) await rbac.deleteClusterRoleBinding({ name: b.metadata.name });
    if (foreign) await rbac.deleteClusterRoleBinding({ name: foreign }).catch(() => undefined);
  });

  it('moves every subject to its namespace binding before the single binding goes, and drops the one without an agent', async () => {
    const own = await createTestNamespace(kc, 'upgrade-sys', LABELS);
    const teams = [await createTestNamespace(kc, 'upgrade-a', LABELS), await createTestNamespace(kc, 'upgrade-b', LABELS)];
    for (const ns of teams) await createPod(kc, ns);
    const live = teams.map((ns) => sa(ns));
    await singleBinding([...teams.map((ns) => [ns, 'default'] as const), [teams[0] as string, 'gone']]);

    // Sampled from before the syncer starts until the single binding is gone.
    const gaps: string[] = [];
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const { single, perNamespace } = await boundAnywhere();
        const bound = new Set([...(single ?? []), ...[...perNamespace.values()].flat()]);
        for (const s of live) if (!bound.has(s)) gaps.push(s);
        if (single === undefined) return;
        await new Promise((r) => setTimeout(r, 20));
      }
    })();

    const port = await freePort();
    syncers.push(await startSyncer({ kubeconfigPath: inject('controlPlane').kubeconfigPath, profilesFile: writeProfiles(dir, BINDING), namespace: own, lease: `rbac-syncer-${suffix}`, port, name: 'syncer', dir }));
    await eventually(boundAnywhere, ({ single }) => single === undefined, 'the single binding deleted');
    sampling = false;
    await sampler;

    expect(gaps).toEqual([]);
    // Other suites' namespaces on this control plane are bound too: look at this test's own. The
    // ServiceAccount without an agent is dropped after the grace.
    const ownBindings = async () => {
      const { perNamespace } = await boundAnywhere();
      return teams.map((ns) => perNamespace.get(`${BINDING}.${ns}`));
    };
    await eventually(ownBindings, (bound) => JSON.stringify(bound) === JSON.stringify(live.map((s) => [s])), 'each namespace binding holding its own live ServiceAccount only');
    await syncers.pop()?.stop();
  });

  it('keeps a single binding while a subject of it cannot move, revokes through it all the same, and plans the profile again only on a change', async () => {
    const own = await createTestNamespace(kc, 'upgrade-sys', LABELS);
    const free = await createTestNamespace(kc, 'upgrade-free', LABELS);
    const taken = await createTestNamespace(kc, 'upgrade-taken', LABELS);
    for (const ns of [free, taken]) await createPod(kc, ns);
    // A binding of someone else holds the name the syncer would give the namespace's own.
    foreign = `${BINDING}.${taken}`;
    await rbac.createClusterRoleBinding({
      body: { metadata: { name: foreign }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' }, subjects: [{ kind: 'User', name: 'someone' }] },
    });
    await singleBinding([[free, 'default'], [taken, 'default']]);

    const port = await freePort();
    syncers.push(await startSyncer({ kubeconfigPath: inject('controlPlane').kubeconfigPath, profilesFile: writeProfiles(dir, BINDING), namespace: own, lease: `rbac-syncer-${suffix}-2`, port, name: 'syncer-2', dir }));
    await eventually(boundAnywhere, ({ perNamespace }) => perNamespace.get(`${BINDING}.${free}`)?.includes(sa(free)) === true, 'the free namespace bound in its own binding');
    // The taken namespace's agent has nowhere else to be bound: the single binding stays.
    expect((await boundAnywhere()).single?.sort()).toEqual([sa(free), sa(taken)].sort());

    // The free namespace's agent goes: after the grace it is bound nowhere, the single binding included.
    await deleteAllPods(kc, free);
    await eventually(boundAnywhere, ({ single, perNamespace }) => !(perNamespace.get(`${BINDING}.${free}`) ?? []).includes(sa(free)) && single?.join() === sa(taken), 'the free ServiceAccount revoked everywhere');

    // Then, once the lists of those revoked have run out, nothing changes for five seconds (after
    // two for the last change's echoes): the whole profile is not planned over and over.
    await eventually(boundAnywhere, ({ listing }) => listing === 0, 'the revoked lists run out');
    await new Promise((r) => setTimeout(r, 2_000));
    const before = (await profilePlans(port)) ?? 0;
    await new Promise((r) => setTimeout(r, 5_000));
    expect(((await profilePlans(port)) ?? 0) - before).toBeLessThanOrEqual(1);

    // Once the name is free, the next change moves the last subject and the single binding goes.
    await rbac.deleteClusterRoleBinding({ name: foreign });
    await createPod(kc, taken);
    await eventually(boundAnywhere, ({ single, perNamespace }) => single === undefined && perNamespace.get(`${BINDING}.${taken}`)?.includes(sa(taken)) === true, 'the last subject moved and the single binding deleted');
  });
});
