import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api, PatchStrategy, RbacAuthorizationV1Api, setHeaderOptions, type V1Pod } from '@kubernetes/client-node';
import { referenceProfile } from '@outrigger/agent-profiles';
import { createTestNamespace, freePort, kubeConfigFrom, type ManagedProcess } from '@outrigger/control-plane';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { bindingSubjects, canExec, createPod, deleteAllPods, eventually, injected, LABELS, OPT_IN, sa, startSyncer, writeProfiles } from './support.js';

// A hostile tenant against the syncer as shipped, one attack per test; its binding is named for
// this suite alone, so it sees no other suite's namespaces.
const suffix = randomBytes(3).toString('hex');
const BINDING = `attack-exec-${suffix}`;
const CAP = 10;
const dir = mkdtempSync(join(tmpdir(), 'rbac-syncer-attacks-'));
const kc = kubeConfigFrom(inject('controlPlane').kubeconfigPath);
const core = kc.makeApiClient(CoreV1Api);
const rbac = kc.makeApiClient(RbacAuthorizationV1Api);
const subjects = () => bindingSubjects(kc, BINDING);
const namespaces: string[] = [];
let syncer: ManagedProcess | undefined;

/** A ServiceAccount name as long as Kubernetes allows, unique by `i`. */
const longName = (i: number) => `${i}-${'a'.repeat(251 - String(i).length)}`;

beforeAll(async () => {
  const own = await createTestNamespace(kc, 'attack-sys');
  syncer = await startSyncer({
    kubeconfigPath: inject('controlPlane').kubeconfigPath,
    profilesFile: writeProfiles(dir, BINDING),
    namespace: own,
    lease: `attack-${suffix}`,
    port: await freePort(),
    name: 'attack-syncer',
    dir,
    env: { MAX_SUBJECTS_PER_NAMESPACE: String(CAP) },
  });
});

afterAll(async () => {
  await syncer?.stop();
  for (const ns of namespaces) await deleteAllPods(kc, ns);
});

async function tenant(prefix: string): Promise<string> {
  const ns = await createTestNamespace(kc, prefix, LABELS);
  namespaces.push(ns);
  return ns;
}

describe('a hostile tenant', () => {
  it('filling its namespace with ServiceAccounts binds at most the cap of them, and keeps no other tenant from being bound or unbound', async () => {
    const attacker = await tenant('greedy');
    const victim = await tenant('victim');
    await createPod(kc, victim, 'default');
    const names = Array.from({ length: 3 * CAP }, (_, i) => longName(i));
    for (let i = 0; i < names.length; i += 10) {
      await Promise.all(
        names.slice(i, i + 10).map(async (name) => {
          await core.createNamespacedServiceAccount({ namespace: attacker, body: { metadata: { name } } });
          await createPod(kc, attacker, name);
        }),
      );
    }
    const bound = await eventually(subjects, (s) => s.filter((x) => x.startsWith(`ServiceAccount:${attacker}/`)).length === CAP && s.includes(sa(victim)), 'the cap reached and the victim bound');
    // Only the attacker's own object holds the attacker's subjects.
    const own = await rbac.readClusterRoleBinding({ name: `${BINDING}.${attacker}` });
    expect(own.subjects?.every((s) => s.namespace === attacker)).toBe(true);
    expect(own.subjects).toHaveLength(CAP);
    const theirs = await rbac.readClusterRoleBinding({ name: `${BINDING}.${victim}` });
    expect(theirs.subjects).toEqual([{ kind: 'ServiceAccount', name: 'default', namespace: victim }]);
    expect(bound.filter((x) => x.startsWith(`ServiceAccount:${attacker}/`))).toHaveLength(CAP);
    // A new tenant is still bound, and a tenant whose pods go is still unbound after the grace.
    const late = await tenant('late');
    await createPod(kc, late);
    await eventually(subjects, (s) => s.includes(sa(late)), 'a new tenant bound beside the attacker');
    await deleteAllPods(kc, victim);
    await eventually(subjects, (s) => !s.includes(sa(victim)), 'the victim unbound after its grace');
    await eventually(() => canExec(kc, victim, 'default'), (can) => can === false, 'exec refused to the unbound victim');
  });

  it('a pod created without opting in, carrying a status annotation and an agent-named container, then annotated: never bound', async () => {
    const ns = await tenant('forger');
    const image = referenceProfile().container.image.replace(/:[^:/]*$/, ':attacker');
    await core.createNamespacedServiceAccount({ namespace: ns, body: { metadata: { name: 'forged' } } });
    // The status annotation copied from a real injection; the container is the agent's repository with another tag and command.
    const real = injected({ metadata: { name: 'x', annotations: OPT_IN }, spec: { containers: [{ name: 'app', image: 'busybox' }] } }, ns) as { metadata: { annotations: Record<string, string> } };
    const status = real.metadata.annotations['xxl-agent/status'] ?? '';
    const forged = {
      metadata: { name: 'forged', annotations: { 'xxl-agent/status': status } },
      spec: {
        serviceAccountName: 'forged',
        containers: [
          { name: 'app', image: 'busybox' },
          { name: 'xxl-agent', image, command: ['sh', '-c', 'exec sleep 1d'] },
        ],
      },
    };
    await core.createNamespacedPod({ namespace: ns, body: forged as V1Pod });
    await core.patchNamespacedPod({ namespace: ns, name: 'forged', body: { metadata: { annotations: OPT_IN } } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
    // The control, created after: once it is bound, the forged pod has been judged too.
    await createPod(kc, ns);
    await eventually(subjects, (s) => s.includes(sa(ns)), 'the real agent bound');
    expect((await subjects()).filter((s) => s.startsWith(`ServiceAccount:${ns}/`))).toEqual([sa(ns)]);
    expect(await canExec(kc, ns, 'forged')).toBe(false);
  });

  it.each([
    { what: "targets its agent (kubectl debug --target: it could read the agent's token)", tenantName: 'debugged', container: { name: 'debugger', targetContainerName: 'xxl-agent' } },
    { what: 'mounts a volume the agent brings (it could plant files the agent trusts)', tenantName: 'planted', container: { name: 'planter', volumeMounts: [{ name: 'xxl-agent-data', mountPath: '/d' }] } },
  ])('an ephemeral container added to an injected pod that $what unbinds its ServiceAccount, though another of its pods carries a verified agent', async ({ tenantName, container }) => {
    const ns = await tenant(tenantName);
    const name = await createPod(kc, ns);
    await createPod(kc, ns);
    await eventually(subjects, (s) => s.includes(sa(ns)), 'the agent bound');
    const pod = await core.readNamespacedPod({ name, namespace: ns });
    const ephemeral = { image: 'busybox', command: ['sh'], ...container };
    await core.replaceNamespacedPodEphemeralcontainers({ name, namespace: ns, body: { ...pod, spec: { ...pod.spec, containers: pod.spec?.containers ?? [], ephemeralContainers: [ephemeral] } } });
    await eventually(subjects, (s) => !s.includes(sa(ns)), 'the ServiceAccount unbound');
    await eventually(() => canExec(kc, ns, 'default'), (can) => can === false, 'exec refused to the unbound ServiceAccount');
  });

  it("a binding made beforehand under the name of a namespace's binding is never taken over: left as it was, that namespace unbound, the others bound", async () => {
    const squatted = await tenant('squatted');
    const control = await tenant('control');
    const name = `${BINDING}.${squatted}`;
    const foreign = { metadata: { name }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' }, subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'alice' }] };
    await rbac.createClusterRoleBinding({ body: foreign });
    try {
      await createPod(kc, squatted);
      await createPod(kc, control);
      await eventually(subjects, (s) => s.includes(sa(control)), 'the other namespace bound');
      await eventually(async () => readFileSync(join(dir, 'attack-syncer.log'), 'utf8'), (log) => log.includes(`ClusterRoleBinding ${name} exists and is not Outrigger's: left alone`), 'the squatted name left alone');
      const after = await rbac.readClusterRoleBinding({ name });
      expect({ labels: after.metadata?.labels, roleRef: after.roleRef, subjects: after.subjects }).toEqual({ labels: undefined, roleRef: foreign.roleRef, subjects: foreign.subjects });
      expect(await subjects()).not.toContain(sa(squatted));
      expect(await canExec(kc, squatted, 'default')).toBe(false);
    } finally {
      await rbac.deleteClusterRoleBinding({ name });
    }
  });
});
