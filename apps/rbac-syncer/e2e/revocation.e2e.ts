import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RbacAuthorizationV1Api } from '@kubernetes/client-node';
import { REVOKED_ANNOTATION, REVOKED_UNTIL_ANNOTATION } from '@outrigger/agent-profiles';
import { createTestNamespace, freePort, kubeConfigFrom, type ManagedProcess } from '@outrigger/control-plane';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createPod, deleteAllPods, eventually, execAs, LABELS, PAST_ADMISSION, startSyncer, writeProfiles } from './support.js';

// The API server authorizes a request before its admission: an exec authorized just before the
// syncer removed its ServiceAccount meets the exec guard just after. The syncer therefore lists a
// removed ServiceAccount on the binding for REVOKED_KEEP, and the guard judges it as before. Here
// the ServiceAccount keeps exec rights of its own (a grant that is not Outrigger's), so RBAC allows
// throughout and only the guard decides: refused while bound, while listed, and not after.
const suffix = randomBytes(3).toString('hex');
const BINDING = `revoke-exec-${suffix}`;
const OTHER_GRANT = `e2e-exec-anywhere-${suffix}`;
const dir = mkdtempSync(join(tmpdir(), 'rbac-syncer-revocation-'));
const kc = kubeConfigFrom(inject('controlPlane').kubeconfigPath);
const rbac = kc.makeApiClient(RbacAuthorizationV1Api);
let syncer: ManagedProcess | undefined;
let tenant: string;

beforeAll(async () => {
  const own = await createTestNamespace(kc, 'revoke-sys');
  syncer = await startSyncer({
    kubeconfigPath: inject('controlPlane').kubeconfigPath,
    profilesFile: writeProfiles(dir, BINDING),
    namespace: own,
    lease: `revoke-${suffix}`,
    port: await freePort(),
    name: 'revocation-syncer',
    dir,
    env: { REVOKED_KEEP: '8s' },
  });
});

afterAll(async () => {
  await syncer?.stop();
  if (tenant) await deleteAllPods(kc, tenant);
  await rbac.deleteClusterRoleBinding({ name: OTHER_GRANT }).catch(() => undefined);
  await rbac.deleteClusterRole({ name: OTHER_GRANT }).catch(() => undefined);
});

describe('revoking an agent\'s binding', () => {
  it('keeps the exec guard judging the ServiceAccount for REVOKED_KEEP after the syncer removed it', async () => {
    tenant = await createTestNamespace(kc, 'revoke', LABELS);
    const victims = await createTestNamespace(kc, 'revoke-victim');
    const victim = await createPod(kc, victims, 'default', false);
    const agentPod = await createPod(kc, tenant);
    const user = `system:serviceaccount:${tenant}:default`;
    await rbac.createClusterRole({ body: { metadata: { name: OTHER_GRANT }, rules: [{ apiGroups: [''], resources: ['pods/exec'], verbs: ['create', 'get'] }, { apiGroups: [''], resources: ['pods'], verbs: ['get'] }] } });
    await rbac.createClusterRoleBinding({ body: { metadata: { name: OTHER_GRANT }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: OTHER_GRANT }, subjects: [{ kind: 'ServiceAccount', name: 'default', namespace: tenant }] } });
    const binding = () => rbac.readClusterRoleBinding({ name: `${BINDING}.${tenant}` }).catch(() => undefined);
    const refused = (held: string) => `outrigger exec guard: ${user} ${held} an agent role through ClusterRoleBinding ${BINDING}.${tenant}, which reaches only pods of its own namespace ${tenant}`;

    await eventually(() => execAs(user, victims, victim, agentPod), (out) => out.includes(refused('holds')), 'the guard refusing the bound ServiceAccount');
    await deleteAllPods(kc, tenant);
    // After the grace: no longer a subject, listed as revoked, and the guard still refuses.
    const emptied = await eventually(binding, (b) => b !== undefined && (b.subjects ?? []).length === 0, 'the binding emptied');
    expect(emptied?.metadata?.annotations?.[REVOKED_ANNOTATION]).toBe(`${tenant}/default`);
    expect(Number(emptied?.metadata?.annotations?.[REVOKED_UNTIL_ANNOTATION])).toBeGreaterThan(Date.now());
    expect(await execAs(user, victims, victim, agentPod)).toContain(refused('held until a moment ago'));
    // Once the list has run out the binding goes, and the guard judges the ServiceAccount no more: its own grant lets it past admission.
    await eventually(binding, (b) => b === undefined, 'the binding deleted after REVOKED_KEEP', 60_000);
    expect(await execAs(user, victims, victim, agentPod)).toMatch(PAST_ADMISSION);
  });
});
