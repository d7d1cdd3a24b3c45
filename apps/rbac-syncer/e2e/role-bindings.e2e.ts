import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AdmissionregistrationV1Api, AuthorizationV1Api, CoreV1Api, PatchStrategy, RbacAuthorizationV1Api, setHeaderOptions, type KubeConfig } from '@kubernetes/client-node';
import { referenceProfile } from '@outrigger/agent-profiles';
import { createTestNamespace, freePort, kubeConfigFrom, type ManagedProcess } from '@outrigger/control-plane';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { execGuardName } from '@outrigger/install';
import { createPod, deleteAllPods, eventually, EXEC_GUARD_NAME, execAs, execWithToken, installExecGuard, LABELS, PAST_ADMISSION, startSyncer, writeProfileFile } from './support.js';

const XXL_JOB_PROFILE = referenceProfile();

// A profile that asks for namespace-scoped RoleBindings instead of one ClusterRoleBinding.
const NAME = `xxl-agent-ns-${randomBytes(3).toString('hex')}`;
const dir = mkdtempSync(join(tmpdir(), 'rbac-syncer-rb-'));

async function roleBindingSubjects(kc: KubeConfig, namespace: string): Promise<string[] | undefined> {
  try {
    const rb = await kc.makeApiClient(RbacAuthorizationV1Api).readNamespacedRoleBinding({ name: NAME, namespace });
    return (rb.subjects ?? []).map((s) => `${s.namespace}/${s.name}`);
  } catch {
    return undefined;
  }
}

async function canExecIn(kc: KubeConfig, saNamespace: string, namespace: string): Promise<boolean> {
  const review = await kc.makeApiClient(AuthorizationV1Api).createSubjectAccessReview({
    body: {
      spec: {
        user: `system:serviceaccount:${saNamespace}:default`,
        groups: ['system:serviceaccounts', `system:serviceaccounts:${saNamespace}`, 'system:authenticated'],
        resourceAttributes: { verb: 'create', resource: 'pods', subresource: 'exec', namespace },
      },
    },
  });
  return review.status?.allowed === true;
}

describe('rbac-syncer with a RoleBinding profile', () => {
  let kc: KubeConfig;
  let syncer: ManagedProcess | undefined;
  let port: number;

  beforeAll(async () => {
    kc = kubeConfigFrom(inject('controlPlane').kubeconfigPath);
    const rules = XXL_JOB_PROFILE.rbac?.rules ?? [];
    const profilesFile = writeProfileFile(dir, { ...XXL_JOB_PROFILE, rbac: { clusterRole: NAME, binding: { kind: 'RoleBinding', name: NAME }, rules } });
    const own = await createTestNamespace(kc, 'rbac-sys');
    port = await freePort();
    syncer = await startSyncer({ kubeconfigPath: inject('controlPlane').kubeconfigPath, profilesFile, namespace: own, lease: NAME, port, name: 'rb-syncer', dir });
  });

  afterAll(async () => {
    await syncer?.stop();
  });

  it('binds each ServiceAccount in its own namespace only, and deletes an emptied RoleBinding after the grace', async () => {
    const a = await createTestNamespace(kc, 'rb-a', LABELS);
    const b = await createTestNamespace(kc, 'rb-b', LABELS);
    await createPod(kc, a);
    await createPod(kc, b);
    await eventually(() => roleBindingSubjects(kc, a), (s) => JSON.stringify(s) === JSON.stringify([`${a}/default`]), 'RoleBinding in a');
    await eventually(() => roleBindingSubjects(kc, b), (s) => JSON.stringify(s) === JSON.stringify([`${b}/default`]), 'RoleBinding in b');
    await eventually(() => canExecIn(kc, a, a), (ok) => ok === true, 'a may exec in a');
    expect(await canExecIn(kc, a, b)).toBe(false); // the point of RoleBindings
    await deleteAllPods(kc, a);
    await eventually(() => roleBindingSubjects(kc, a), (s) => s === undefined, 'RoleBinding in a deleted');
    expect(await roleBindingSubjects(kc, b)).toEqual([`${b}/default`]);
  });

  it('repairs a RoleBinding edited by hand', async () => {
    const c = await createTestNamespace(kc, 'rb-c', LABELS);
    await createPod(kc, c);
    await eventually(() => roleBindingSubjects(kc, c), (s) => JSON.stringify(s) === JSON.stringify([`${c}/default`]), 'RoleBinding in c');
    await kc.makeApiClient(RbacAuthorizationV1Api).patchNamespacedRoleBinding(
      { name: NAME, namespace: c, body: [{ op: 'add', path: '/subjects/-', value: { kind: 'ServiceAccount', name: 'intruder', namespace: c } }] },
      setHeaderOptions('Content-Type', PatchStrategy.JsonPatch),
    );
    await eventually(() => roleBindingSubjects(kc, c), (s) => JSON.stringify(s) === JSON.stringify([`${c}/default`]), 'RoleBinding in c repaired');
  });

  it("the RoleBindings' exec guard: a RoleBinding-bound ServiceAccount execs only into the pod its token was issued to; others are untouched", async () => {
    const d = await createTestNamespace(kc, 'rb-d', LABELS);
    const own = await createPod(kc, d);
    const neighbour = await createPod(kc, d, 'default', false);
    await eventually(() => roleBindingSubjects(kc, d), (s) => JSON.stringify(s) === JSON.stringify([`${d}/default`]), 'RoleBinding in d');
    // kubectl reads the pod before it execs (the agent does not): a reader grant that is not Outrigger's.
    const rbac = kc.makeApiClient(RbacAuthorizationV1Api);
    await rbac.createNamespacedRole({ namespace: d, body: { metadata: { name: 'pod-reader' }, rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }] } });
    await rbac.createNamespacedRoleBinding({ namespace: d, body: { metadata: { name: 'pod-reader' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'pod-reader' }, subjects: [{ kind: 'ServiceAccount', name: 'default', namespace: d }] } });
    const agent = `system:serviceaccount:${d}:default`;
    await eventually(() => execAs(agent, d, own, own), (out) => PAST_ADMISSION.test(out), 'the agent past authorization and admission into its own pod');
    const refused = `ValidatingAdmissionPolicy '${execGuardName('RoleBinding')}' with binding '${execGuardName('RoleBinding')}' denied request: outrigger exec guard: ${agent} holds an agent role through RoleBinding ${NAME}, which reaches only the pod its token was issued to`;
    expect(await execAs(agent, d, neighbour, own)).toContain(`${refused} (${d}/${own}); exec into ${d}/${neighbour} is refused`);
    expect(await execAs(agent, d, own)).toContain(`${refused} (this token was issued to no pod); exec into ${d}/${own} is refused`);
    // Real tokens: the API server itself names the pod a token is bound to.
    expect(await execWithToken(kc, dir, d, 'default', own, own)).toMatch(PAST_ADMISSION);
    expect(await execWithToken(kc, dir, d, 'default', neighbour, own)).toContain(`${refused} (${d}/${own}); exec into ${d}/${neighbour} is refused`);
    // Someone else's exec is not Outrigger's business: a ServiceAccount with its own RoleBinding to the same role.
    await kc.makeApiClient(CoreV1Api).createNamespacedServiceAccount({ namespace: d, body: { metadata: { name: 'ops' } } });
    await rbac.createNamespacedRoleBinding({ namespace: d, body: { metadata: { name: 'ops-exec' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: NAME }, subjects: [{ kind: 'ServiceAccount', name: 'ops', namespace: d }] } });
    await rbac.createNamespacedRoleBinding({ namespace: d, body: { metadata: { name: 'ops-reader' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'pod-reader' }, subjects: [{ kind: 'ServiceAccount', name: 'ops', namespace: d }] } });
    await eventually(() => execAs(`system:serviceaccount:${d}:ops`, d, neighbour), (out) => PAST_ADMISSION.test(out), 'the operator past admission into any pod of its namespace');
  });

  it("empties its RoleBindings while the RoleBindings' guard is missing, says why on /readyz, and restores them", async () => {
    const e = await createTestNamespace(kc, 'rb-e', LABELS);
    await createPod(kc, e);
    await eventually(() => roleBindingSubjects(kc, e), (s) => JSON.stringify(s) === JSON.stringify([`${e}/default`]), 'RoleBinding in e');
    const namespaced = execGuardName('RoleBinding', EXEC_GUARD_NAME);
    await kc.makeApiClient(AdmissionregistrationV1Api).deleteValidatingAdmissionPolicyBinding({ name: namespaced });
    await eventually(() => roleBindingSubjects(kc, e), (s) => s === undefined || s.length === 0, 'RoleBinding in e emptied');
    const ready = await fetch(`http://127.0.0.1:${port}/readyz`);
    expect(ready.status).toBe(503);
    expect(await ready.text()).toContain(`exec guard not in force: ValidatingAdmissionPolicyBinding ${namespaced} not found`);
    await installExecGuard(inject('controlPlane').kubeconfigPath);
    await eventually(() => roleBindingSubjects(kc, e), (s) => JSON.stringify(s) === JSON.stringify([`${e}/default`]), 'RoleBinding in e restored');
    expect((await fetch(`http://127.0.0.1:${port}/readyz`)).status).toBe(200);
  });
});
