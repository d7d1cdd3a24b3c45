import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AuthorizationV1Api, CoreV1Api, PatchStrategy, RbacAuthorizationV1Api, setHeaderOptions, type KubeConfig, type V1ClusterRoleBinding } from '@kubernetes/client-node';
import { XXL_JOB_PROFILE } from '@outrigger/admission';
import { createTestNamespace, freePort, kubeConfigFrom, startApp, type ManagedProcess } from '@outrigger/control-plane';
import { randomBytes } from 'node:crypto';
import { stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';

// The built syncer against the real control plane, with a profile whose ClusterRole and binding
// names are unique to this run.
const suffix = randomBytes(3).toString('hex');
const BINDING = `xxl-agent-exec-${suffix}`;
const LABELS = { 'outrigger.dev/injection': 'enabled' };
const dir = mkdtempSync(join(tmpdir(), 'rbac-syncer-e2e-'));
const profilesFile = join(dir, 'profiles.yaml');
const rules = XXL_JOB_PROFILE.rbac?.rules ?? [];
const profile = { ...XXL_JOB_PROFILE, rbac: { rules, clusterRole: BINDING, binding: { kind: 'ClusterRoleBinding', name: BINDING } } };

let kc: KubeConfig;
let core: CoreV1Api;
let rbac: RbacAuthorizationV1Api;
let ownNamespace: string;
const syncers: ManagedProcess[] = [];

async function startSyncer(port: number, name: string): Promise<ManagedProcess> {
  const child = await startApp('rbac-syncer', {
    env: {
      PORT: String(port),
      KUBECONFIG: inject('controlPlane').kubeconfigPath,
      PROFILES_FILE: profilesFile,
      POD_NAMESPACE: ownNamespace,
      GRACE_SECONDS: '2',
      RESYNC_SECONDS: '30',
      LEASE_NAME: `rbac-syncer-${suffix}`,
      LEASE_DURATION_SECONDS: '3',
      POD_NAME: name,
    },
    readyUrl: `http://127.0.0.1:${port}/readyz`,
    logFile: join(dir, `${name}.log`),
  });
  syncers.push(child);
  return child;
}

async function createPod(namespace: string, serviceAccount = 'default', optIn = true): Promise<string> {
  const name = `app-${randomBytes(3).toString('hex')}`;
  await core.createNamespacedPod({
    namespace,
    body: {
      metadata: { name, annotations: optIn ? { 'xxl-agent/enable': 'true' } : {} },
      spec: { serviceAccountName: serviceAccount, containers: [{ name: 'app', image: 'busybox' }] },
    },
  });
  return name;
}

async function subjects(): Promise<string[] | undefined> {
  let binding: V1ClusterRoleBinding;
  try {
    binding = await rbac.readClusterRoleBinding({ name: BINDING });
  } catch {
    return undefined;
  }
  return (binding.subjects ?? []).map((s) => `${s.kind}:${s.namespace ?? ''}/${s.name}`);
}

async function eventually<T>(read: () => Promise<T>, accept: (value: T) => boolean, what: string, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read().catch((e: Error) => e as unknown as T);
    if (accept(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; last: ${JSON.stringify(value)?.slice(0, 400)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function metric(port: number, name: string): Promise<number | undefined> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `));
  return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : undefined;
}

async function canExec(namespace: string, serviceAccount: string): Promise<boolean> {
  const review = await kc.makeApiClient(AuthorizationV1Api).createSubjectAccessReview({
    body: {
      spec: {
        user: `system:serviceaccount:${namespace}:${serviceAccount}`,
        groups: ['system:serviceaccounts', `system:serviceaccounts:${namespace}`, 'system:authenticated'],
        resourceAttributes: { verb: 'create', resource: 'pods', subresource: 'exec', namespace },
      },
    },
  });
  return review.status?.allowed === true;
}

const sa = (ns: string, name = 'default') => `ServiceAccount:${ns}/${name}`;

describe('rbac-syncer', () => {
  let portA: number;
  let portB: number;
  const labelled: string[] = [];
  let unlabelled: string;

  beforeAll(async () => {
    writeFileSync(profilesFile, stringify({ profiles: [profile] }));
    kc = kubeConfigFrom(inject('controlPlane').kubeconfigPath);
    core = kc.makeApiClient(CoreV1Api);
    rbac = kc.makeApiClient(RbacAuthorizationV1Api);
    ownNamespace = await createTestNamespace(kc, 'rbac-sys', LABELS); // labelled, still never bound
    for (const prefix of ['team-a', 'team-b', 'team-c']) labelled.push(await createTestNamespace(kc, prefix, LABELS));
    unlabelled = await createTestNamespace(kc, 'plain');
    portA = await freePort();
    portB = await freePort();
    await startSyncer(portA, 'syncer-a');
  });

  afterAll(async () => {
    await Promise.all(syncers.map((s) => s.stop()));
  });

  it('binds the ServiceAccounts of opted-in pods in three labelled namespaces, and nothing else', async () => {
    const [a, b, c] = labelled as [string, string, string];
    await core.createNamespacedServiceAccount({ namespace: b, body: { metadata: { name: 'agent' } } });
    await createPod(a);
    await createPod(a); // same SA twice: one subject
    await createPod(b, 'agent');
    await createPod(c);
    await createPod(c, 'default', false); // not opted in: no change
    await createPod(unlabelled);
    await createPod(ownNamespace);
    const want = [sa(a), sa(b, 'agent'), sa(c)].sort();
    await eventually(subjects, (s) => JSON.stringify(s) === JSON.stringify(want), 'three subjects');
    const role = await rbac.readClusterRole({ name: BINDING });
    expect(role.metadata?.labels?.['app.kubernetes.io/managed-by']).toBe('outrigger-rbac-syncer');
    expect(role.rules?.map((r) => [r.resources, r.verbs])).toEqual(rules.map((r) => [r.resources, r.verbs]));
    // and the ServiceAccounts can do what the agent needs, an unbound one cannot
    await eventually(() => canExec(b, 'agent'), (ok) => ok === true, 'bound SA may exec');
    expect(await canExec(unlabelled, 'default')).toBe(false);
    expect(await canExec(b, 'default')).toBe(false);
    // an Event tells what changed
    await eventually(
      () => core.listNamespacedEvent({ namespace: 'default', fieldSelector: `involvedObject.name=${BINDING}` }),
      (list) => (list.items ?? []).some((e) => e.reason === 'SubjectsChanged'),
      'a SubjectsChanged event',
    );
  });

  it('removes a subject after the grace period when its last pod is deleted', async () => {
    const a = labelled[0] as string;
    const pods = await core.listNamespacedPod({ namespace: a });
    for (const pod of pods.items) await core.deleteNamespacedPod({ namespace: a, name: pod.metadata?.name ?? '', gracePeriodSeconds: 0 });
    await eventually(subjects, (s) => Array.isArray(s) && !s.includes(sa(a)) && s.length === 2, 'subject of the emptied namespace removed');
    expect(await canExec(a, 'default')).toBe(false);
  });

  it('repairs a binding edited by hand', async () => {
    const before = await subjects();
    await rbac.patchClusterRoleBinding(
      { name: BINDING, body: [{ op: 'replace', path: '/subjects', value: [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'mallory' }] }] },
      setHeaderOptions('Content-Type', PatchStrategy.JsonPatch),
    );
    await eventually(subjects, (s) => JSON.stringify(s) === JSON.stringify(before), 'binding repaired');
  });

  it('runs one leader among two syncers, and the other takes over when the leader stops', async () => {
    const b = await startSyncer(portB, 'syncer-b');
    await eventually(async () => [await metric(portA, 'outrigger_rbac_syncer_leader'), await metric(portB, 'outrigger_rbac_syncer_leader')], (v) => JSON.stringify(v) === '[1,0]', 'A leads, B waits');
    const first = syncers[0] as ManagedProcess;
    await first.stop();
    await eventually(() => metric(portB, 'outrigger_rbac_syncer_leader'), (v) => v === 1, 'B leads');
    const d = await createTestNamespace(kc, 'team-d', LABELS);
    await createPod(d);
    await eventually(subjects, (s) => Array.isArray(s) && s.includes(sa(d)), 'B binds a new namespace');
    expect(b.running).toBe(true);
  });
});
