import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AuthorizationV1Api, PatchStrategy, RbacAuthorizationV1Api, setHeaderOptions, type KubeConfig } from '@kubernetes/client-node';
import { referenceProfile } from '@outrigger/agent-profiles';
import { createTestNamespace, freePort, kubeConfigFrom, type ManagedProcess } from '@outrigger/control-plane';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createPod, deleteAllPods, eventually, LABELS, startSyncer, writeProfileFile } from './support.js';

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

  beforeAll(async () => {
    kc = kubeConfigFrom(inject('controlPlane').kubeconfigPath);
    const rules = XXL_JOB_PROFILE.rbac?.rules ?? [];
    const profilesFile = writeProfileFile(dir, { ...XXL_JOB_PROFILE, rbac: { clusterRole: NAME, binding: { kind: 'RoleBinding', name: NAME }, rules } });
    const own = await createTestNamespace(kc, 'rbac-sys');
    syncer = await startSyncer({ kubeconfigPath: inject('controlPlane').kubeconfigPath, profilesFile, namespace: own, lease: NAME, port: await freePort(), name: 'rb-syncer', dir });
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
});
