import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api, PatchStrategy, RbacAuthorizationV1Api, setHeaderOptions } from '@kubernetes/client-node';
import { MANAGED_BY_VALUE, referenceProfile, REVOKED_ANNOTATION, REVOKED_UNTIL_ANNOTATION } from '@outrigger/agent-profiles';
import { createTestNamespace, freePort, kubeConfigFrom, type ManagedProcess } from '@outrigger/control-plane';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { connectAs, createPod, deleteAllPods, eventually, execAs, LABELS, PAST_ADMISSION, startSyncer, writeProfileFile } from './support.js';

// The API server authorizes a request before its admission: an exec authorized just before the
// syncer removed its ServiceAccount meets the exec guard just after. The syncer therefore lists a
// removed ServiceAccount on the binding for REVOKED_KEEP, by whichever path it goes (its pods gone,
// the grant stopped at once, the role renamed), and the guard judges it as before. Here
// the ServiceAccount keeps exec rights of its own (a grant that is not Outrigger's), so RBAC allows
// throughout and only the guard decides: refused while bound, while listed, and not after.
const suffix = randomBytes(3).toString('hex');
const BINDING = `revoke-exec-${suffix}`;
const OTHER_GRANT = `e2e-exec-anywhere-${suffix}`;
const dir = mkdtempSync(join(tmpdir(), 'rbac-syncer-revocation-'));
const kc = kubeConfigFrom(inject('controlPlane').kubeconfigPath);
const rbac = kc.makeApiClient(RbacAuthorizationV1Api);
const RENAMED = `${BINDING}-v2`;
const XXL_JOB_PROFILE = referenceProfile();
let syncer: ManagedProcess | undefined;
let own: string;
const tenants: string[] = [];

/** The rbac-syncer of this suite, binding to ClusterRole `role`. */
async function startRevocationSyncer(role: string): Promise<ManagedProcess> {
  const profilesFile = writeProfileFile(dir, { ...XXL_JOB_PROFILE, rbac: { rules: XXL_JOB_PROFILE.rbac?.rules ?? [], clusterRole: role, binding: { kind: 'ClusterRoleBinding', name: BINDING } } });
  const kubeconfigPath = inject('controlPlane').kubeconfigPath;
  return startSyncer({ kubeconfigPath, profilesFile, namespace: own, lease: `revoke-${suffix}`, port: await freePort(), name: `revocation-syncer-${role}`, dir, env: { REVOKED_KEEP: '8s' } });
}

/**
 * A labelled namespace whose `default` ServiceAccount runs an agent and keeps exec rights of its
 * own everywhere, and a pod in another namespace to aim at: only the guard stands between them.
 */
async function tenantWithOwnGrant(prefix: string) {
  const tenant = await createTestNamespace(kc, prefix, LABELS);
  tenants.push(tenant);
  const victims = await createTestNamespace(kc, `${prefix}-victim`);
  const victim = await createPod(kc, victims, 'default', false);
  const agentPod = await createPod(kc, tenant);
  const user = `system:serviceaccount:${tenant}:default`;
  await rbac.createClusterRoleBinding({ body: { metadata: { name: `${OTHER_GRANT}-${tenant}` }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: OTHER_GRANT }, subjects: [{ kind: 'ServiceAccount', name: 'default', namespace: tenant }] } });
  const neighbour = await createPod(kc, tenant, 'default', false);
  return {
    tenant,
    binding: () => rbac.readClusterRoleBinding({ name: `${BINDING}.${tenant}` }).catch(() => undefined),
    exec: () => execAs(user, victims, victim, agentPod),
    /** `attach` or `portforward` from the agent's pod into the other namespace's pod, a neighbour, or its own pod. */
    connect: (subresource: 'attach' | 'portforward', into: 'victim' | 'neighbour' | 'own') =>
      connectAs(user, into === 'victim' ? victims : tenant, into === 'victim' ? victim : into === 'neighbour' ? neighbour : agentPod, subresource, agentPod),
    victim: `${victims}/${victim}`,
    neighbour: `${tenant}/${neighbour}`,
    refused: (held: 'holds' | 'held until a moment ago') => `outrigger exec guard: ${user} ${held} an agent role through ClusterRoleBinding ${BINDING}.${tenant}, which reaches only pods of its own namespace ${tenant}`,
  };
}

beforeAll(async () => {
  own = await createTestNamespace(kc, 'revoke-sys');
  await rbac.createClusterRole({ body: { metadata: { name: OTHER_GRANT }, rules: [{ apiGroups: [''], resources: ['pods/exec', 'pods/attach', 'pods/portforward'], verbs: ['create', 'get'] }, { apiGroups: [''], resources: ['pods'], verbs: ['get'] }] } });
  syncer = await startRevocationSyncer(BINDING);
});

afterAll(async () => {
  await syncer?.stop();
  for (const tenant of tenants) {
    await deleteAllPods(kc, tenant);
    await rbac.deleteClusterRoleBinding({ name: `${OTHER_GRANT}-${tenant}` }).catch(() => undefined);
    await rbac.deleteClusterRoleBinding({ name: `${BINDING}.${tenant}` }).catch(() => undefined);
  }
  for (const role of [OTHER_GRANT, BINDING, RENAMED]) await rbac.deleteClusterRole({ name: role }).catch(() => undefined);
});

describe('revoking an agent\'s binding', () => {
  it('keeps the exec guard judging the ServiceAccount for REVOKED_KEEP after the syncer removed it', async () => {
    const t = await tenantWithOwnGrant('revoke');
    await eventually(t.exec, (out) => out.includes(t.refused('holds')), 'the guard refusing the bound ServiceAccount');
    await deleteAllPods(kc, t.tenant);
    // After the grace: no longer a subject, listed as revoked, and the guard still refuses.
    const emptied = await eventually(t.binding, (b) => b !== undefined && (b.subjects ?? []).length === 0, 'the binding emptied');
    expect(emptied?.metadata?.annotations?.[REVOKED_ANNOTATION]).toBe(`${t.tenant}/default`);
    expect(Number(emptied?.metadata?.annotations?.[REVOKED_UNTIL_ANNOTATION])).toBeGreaterThan(Date.now());
    // The guard reads the binding from the API server's cache, a moment after a read shows it.
    await eventually(t.exec, (out) => out.includes(t.refused('held until a moment ago')), 'the guard refusing the revoked ServiceAccount');
    // Once the list has run out the binding goes, and the guard judges the ServiceAccount no more: its own grant lets it past admission.
    await eventually(t.binding, (b) => b === undefined, 'the binding deleted after REVOKED_KEEP', 60_000);
    await eventually(t.exec, (out) => PAST_ADMISSION.test(out), 'exec past admission');
  });

  it('dates each ServiceAccount it lists by its own removal, and deletes the binding once the last has run out', async () => {
    const tenant = await createTestNamespace(kc, 'revoke-dates', LABELS);
    tenants.push(tenant);
    const core = kc.makeApiClient(CoreV1Api);
    await core.createNamespacedServiceAccount({ namespace: tenant, body: { metadata: { name: 'second' } } });
    const first = await createPod(kc, tenant);
    await createPod(kc, tenant, 'second');
    const binding = () => rbac.readClusterRoleBinding({ name: `${BINDING}.${tenant}` }).catch(() => undefined);
    await eventually(binding, (b) => (b?.subjects ?? []).length === 2, 'both ServiceAccounts bound');
    await core.deleteNamespacedPod({ namespace: tenant, name: first, gracePeriodSeconds: 0 });
    const one = await eventually(binding, (b) => b?.metadata?.annotations?.[REVOKED_ANNOTATION] === `${tenant}/default`, 'default listed');
    const firstUntil = Number(one?.metadata?.annotations?.[REVOKED_UNTIL_ANNOTATION]);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    await deleteAllPods(kc, tenant);
    const both = await eventually(binding, (b) => b !== undefined && (b.subjects ?? []).length === 0, 'the binding emptied');
    expect(both?.metadata?.annotations?.[REVOKED_ANNOTATION]).toBe(`${tenant}/default ${tenant}/second`);
    // The second removal dates only its own entry: the first keeps its date.
    const [defaultUntil, secondUntil] = (both?.metadata?.annotations?.[REVOKED_UNTIL_ANNOTATION] ?? '').split(' ').map(Number);
    expect(defaultUntil).toBe(firstUntil);
    expect(secondUntil).toBeGreaterThan(firstUntil);
    await eventually(binding, (b) => b === undefined, 'the binding deleted once the last entry has run out', 60_000);
    expect(Date.now()).toBeGreaterThanOrEqual(secondUntil as number);
  });

  it('lists them too when the grant stops at once: the profile\'s ClusterRole no longer Outrigger\'s', async () => {
    const t = await tenantWithOwnGrant('revoke-foreign');
    await eventually(t.exec, (out) => out.includes(t.refused('holds')), 'the guard refusing the bound ServiceAccount');
    await rbac.patchClusterRole({ name: BINDING, body: [{ op: 'remove', path: '/metadata/labels/app.kubernetes.io~1managed-by' }] }, setHeaderOptions('Content-Type', PatchStrategy.JsonPatch));
    const emptied = await eventually(t.binding, (b) => b !== undefined && (b.subjects ?? []).length === 0, 'the binding emptied at once');
    expect(emptied?.metadata?.annotations?.[REVOKED_ANNOTATION]).toBe(`${t.tenant}/default`);
    // The guard reads the binding from the API server's cache, a moment after a read shows it.
    await eventually(t.exec, (out) => out.includes(t.refused('held until a moment ago')), 'the guard refusing the revoked ServiceAccount');
    await eventually(t.binding, (b) => b === undefined, 'the binding deleted after REVOKED_KEEP', 60_000);
    await eventually(t.exec, (out) => PAST_ADMISSION.test(out), 'exec past admission');
    // Outrigger's again: bound again.
    await rbac.patchClusterRole({ name: BINDING, body: [{ op: 'add', path: '/metadata/labels/app.kubernetes.io~1managed-by', value: MANAGED_BY_VALUE }] }, setHeaderOptions('Content-Type', PatchStrategy.JsonPatch));
    await eventually(t.exec, (out) => out.includes(t.refused('holds')), 'bound again');
  });

  it('lists them too when the profile names another ClusterRole (a roleRef cannot change): emptied, deleted once the list runs out, then bound to the new role', async () => {
    const t = await tenantWithOwnGrant('revoke-renamed');
    await eventually(t.exec, (out) => out.includes(t.refused('holds')), 'the guard refusing the bound ServiceAccount');
    await syncer?.stop();
    syncer = await startRevocationSyncer(RENAMED);
    const emptied = await eventually(t.binding, (b) => b !== undefined && (b.subjects ?? []).length === 0, 'the binding of the old role emptied');
    expect(emptied?.roleRef.name).toBe(BINDING);
    expect(emptied?.metadata?.annotations?.[REVOKED_ANNOTATION]).toBe(`${t.tenant}/default`);
    // The guard reads the binding from the API server's cache, a moment after a read shows it.
    await eventually(t.exec, (out) => out.includes(t.refused('held until a moment ago')), 'the guard refusing the revoked ServiceAccount');
    const rebound = await eventually(t.binding, (b) => b?.roleRef.name === RENAMED && (b.subjects ?? []).length === 1, 'bound to the new role after REVOKED_KEEP', 60_000);
    expect(rebound?.subjects).toEqual([{ kind: 'ServiceAccount', name: 'default', namespace: t.tenant }]);
    await eventually(t.exec, (out) => out.includes(t.refused('holds')), 'the guard refusing the rebound ServiceAccount');
  });
});

describe('the exec guard on attach and port-forward', () => {
  it('refuses a bound ServiceAccount attach and port-forward into another namespace and into a neighbour, as exec, and admits them into its own pod', async () => {
    const t = await tenantWithOwnGrant('connect');
    await eventually(t.exec, (out) => out.includes(t.refused('holds')), 'the guard refusing the bound ServiceAccount');
    for (const subresource of ['attach', 'portforward'] as const) {
      expect(await t.connect(subresource, 'victim')).toContain(`${t.refused('holds')}; ${subresource} into ${t.victim} is refused`);
      expect(await t.connect(subresource, 'neighbour')).toMatch(new RegExp(`outrigger exec guard: .* which reaches only the pod its token was issued to .*; ${subresource} into ${t.neighbour} is refused`));
      // Its own grant lets it that far; only the missing node stops it.
      expect(await t.connect(subresource, 'own')).toMatch(PAST_ADMISSION);
    }
  });
});
