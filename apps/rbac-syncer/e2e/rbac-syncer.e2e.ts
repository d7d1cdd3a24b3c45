import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AdmissionregistrationV1Api, CoreV1Api, PatchStrategy, RbacAuthorizationV1Api, setHeaderOptions, type KubeConfig } from '@kubernetes/client-node';
import { referenceProfile } from '@outrigger/agent-profiles';
import { execGuardPolicy } from '@outrigger/install';
import { applyObject, loadKubeClient } from '@outrigger/kube';
import { createTestNamespace, freePort, kubeConfigFrom, type ManagedProcess } from '@outrigger/control-plane';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  bindingSubjects,
  canExec,
  createPod,
  deleteAllPods,
  eventually,
  EXEC_GUARD_NAME,
  execAs,
  execWithToken,
  installExecGuard,
  LABELS,
  metric,
  OPT_IN,
  PAST_ADMISSION,
  sa,
  startSyncer,
  writeProfiles,
} from './support.js';

const XXL_JOB_PROFILE = referenceProfile();

// The built syncer against the shared control plane, with a profile whose ClusterRole and binding
// names are unique to this run.
const suffix = randomBytes(3).toString('hex');
const BINDING = `xxl-agent-exec-${suffix}`;
const dir = mkdtempSync(join(tmpdir(), 'rbac-syncer-e2e-'));

let kc: KubeConfig;
let core: CoreV1Api;
let rbac: RbacAuthorizationV1Api;
let ownNamespace: string;
let profilesFile: string;
const syncers: ManagedProcess[] = [];

async function start(port: number, name: string): Promise<ManagedProcess> {
  const child = await startSyncer({ kubeconfigPath: inject('controlPlane').kubeconfigPath, profilesFile, namespace: ownNamespace, lease: `rbac-syncer-${suffix}`, port, name, dir });
  syncers.push(child);
  return child;
}

/** This suite's subjects: other suites' opted-in pods on the same API server count for its syncer too. */
const mine = new Set<string>();
async function namespace(prefix: string, labels?: Record<string, string>): Promise<string> {
  const ns = await createTestNamespace(kc, prefix, labels);
  mine.add(ns);
  return ns;
}
const subjects = async () => (await bindingSubjects(kc, BINDING)).filter((s) => mine.has(s.slice(s.indexOf(':') + 1, s.indexOf('/'))));
const GUARD_REFUSED = /ValidatingAdmissionPolicy 'outrigger-agent-exec-guard' .*denied request: outrigger exec guard: .* reaches only pods of its own namespace/;
const NOT_ITS_POD = /ValidatingAdmissionPolicy 'outrigger-agent-exec-guard' .*denied request: outrigger exec guard: .* reaches only the pod its token was issued to/;

const applies = (port: number) => metric(port, 'outrigger_rbac_syncer_api_writes_total', ['kind="ClusterRoleBinding"', 'verb="apply"']);
const unchanged = (port: number) => metric(port, 'outrigger_rbac_syncer_reconciles_total', ['result="unchanged"']);

describe('rbac-syncer', () => {
  let portA: number;
  let portB: number;
  const labelled: string[] = [];
  let unlabelled: string;

  beforeAll(async () => {
    profilesFile = writeProfiles(dir, BINDING);
    kc = kubeConfigFrom(inject('controlPlane').kubeconfigPath);
    core = kc.makeApiClient(CoreV1Api);
    rbac = kc.makeApiClient(RbacAuthorizationV1Api);
    ownNamespace = await namespace('rbac-sys', LABELS); // labelled, still never bound
    for (const prefix of ['team-a', 'team-b', 'team-c']) labelled.push(await namespace(prefix, LABELS));
    unlabelled = await namespace('plain');
    portA = await freePort();
    portB = await freePort();
    await start(portA, 'syncer-a');
  });

  afterAll(async () => {
    await Promise.all(syncers.map((s) => s.stop()));
  });

  it('binds the ServiceAccounts of opted-in pods in three labelled namespaces, and nothing else', async () => {
    const [a, b, c] = labelled as [string, string, string];
    await core.createNamespacedServiceAccount({ namespace: b, body: { metadata: { name: 'agent' } } });
    await createPod(kc, a);
    await createPod(kc, a); // same SA twice: one subject
    await createPod(kc, b, 'agent');
    await createPod(kc, c);
    await createPod(kc, c, 'default', false); // not opted in
    await createPod(kc, unlabelled);
    await createPod(kc, ownNamespace);
    const want = [sa(a), sa(b, 'agent'), sa(c)].sort();
    await eventually(subjects, (s) => JSON.stringify(s) === JSON.stringify(want), 'three subjects');
    const role = await rbac.readClusterRole({ name: BINDING });
    expect(role.metadata?.labels?.['app.kubernetes.io/managed-by']).toBe('outrigger-rbac-syncer');
    const rules = XXL_JOB_PROFILE.rbac?.rules ?? [];
    expect(role.rules?.map((r) => [r.resources, r.verbs])).toEqual(rules.map((r) => [r.resources, r.verbs]));
    // the bound ServiceAccount can do what the agent needs; unbound ones cannot
    await eventually(() => canExec(kc, b, 'agent'), (ok) => ok === true, 'bound SA may exec');
    expect(await canExec(kc, unlabelled, 'default')).toBe(false);
    expect(await canExec(kc, b, 'default')).toBe(false);
    expect(await canExec(kc, ownNamespace, 'default')).toBe(false);
    // each namespace has its own binding, and an Event says what changed in it later
    expect((await rbac.readClusterRoleBinding({ name: `${BINDING}.${b}` })).subjects).toEqual([{ kind: 'ServiceAccount', name: 'agent', namespace: b }]);
    await core.createNamespacedServiceAccount({ namespace: c, body: { metadata: { name: 'second' } } });
    await createPod(kc, c, 'second');
    await eventually(
      () => core.listNamespacedEvent({ namespace: 'default', fieldSelector: `involvedObject.name=${BINDING}.${c}` }),
      (list) => (list.items ?? []).some((e) => e.reason === 'SubjectsChanged'),
      'a SubjectsChanged event',
    );
    // those pod changes were planned namespace by namespace, not as the whole profile
    expect(await metric(portA, 'outrigger_rbac_syncer_planned_subjects_count', ['scope="namespace"'])).toBeGreaterThan(0);
  });

  it('the exec guard: the bound ServiceAccount execs only into the pod its token was issued to; others are untouched', async () => {
    const [a, b] = labelled as [string, string];
    const own = (await core.listNamespacedPod({ namespace: b })).items[0]?.metadata?.name ?? '';
    for (const namespace of ['default', 'kube-system']) await core.createNamespacedServiceAccount({ namespace, body: { metadata: { name: 'default' } } }).catch(() => undefined);
    const targets: [string, string][] = [[a, await createPod(kc, a)], ['default', await createPod(kc, 'default', 'default', false)], [ownNamespace, await createPod(kc, ownNamespace, 'default', false)]];
    await core.createNamespacedPod({ namespace: 'kube-system', body: { metadata: { name: `victim-${suffix}` }, spec: { containers: [{ name: 'c', image: 'busybox' }] } } });
    targets.push(['kube-system', `victim-${suffix}`]);
    const agent = `system:serviceaccount:${b}:agent`;
    // kubectl reads the pod before it execs (the agent does not): a reader grant that is not Outrigger's.
    await rbac.createClusterRole({ body: { metadata: { name: `pod-reader-${suffix}` }, rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }] } });
    const readers = [{ kind: 'ServiceAccount', name: 'agent', namespace: b }, { kind: 'ServiceAccount', name: 'ops', namespace: unlabelled }];
    await rbac.createClusterRoleBinding({
      body: { metadata: { name: `pod-reader-${suffix}` }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: `pod-reader-${suffix}` }, subjects: readers },
    });
    await eventually(() => execAs(agent, b, own, own), (out) => PAST_ADMISSION.test(out), 'the agent past authorization and admission into its own pod');
    for (const [namespace, pod] of targets) {
      const out = await execAs(agent, namespace, pod, own);
      expect(out, `${agent} into ${namespace}/${pod}`).toMatch(GUARD_REFUSED);
      expect(out).toContain(`exec into ${namespace}/${pod} is refused`);
    }
    // Its own namespace, but not its pod: a neighbour of another ServiceAccount, and a second pod of its own.
    const neighbours = [await createPod(kc, b, 'default', false), await createPod(kc, b, 'agent', false)];
    for (const pod of neighbours) {
      const out = await execAs(agent, b, pod, own);
      expect(out, `${agent} into ${b}/${pod}`).toMatch(NOT_ITS_POD);
      expect(out).toContain(`(${b}/${own}); exec into ${b}/${pod} is refused`);
    }
    // A token bound to no pod (a legacy Secret, a TokenRequest without a pod) reaches no pod, not even the one it runs in.
    expect(await execAs(agent, b, own)).toContain(`(this token was issued to no pod); exec into ${b}/${own} is refused`);
    // Real tokens: the API server itself names the pod a token is bound to.
    expect(await execWithToken(kc, dir, b, 'agent', own, own)).toMatch(PAST_ADMISSION);
    expect(await execWithToken(kc, dir, b, 'agent', neighbours[1] as string, own)).toMatch(NOT_ITS_POD);
    expect(await execWithToken(kc, dir, b, 'agent', own)).toContain(`(this token was issued to no pod); exec into ${b}/${own} is refused`);
    // An operator ServiceAccount with its own cluster-wide exec grant is not Outrigger's to judge.
    await core.createNamespacedServiceAccount({ namespace: unlabelled, body: { metadata: { name: 'ops' } } });
    await rbac.createClusterRoleBinding({
      body: {
        metadata: { name: `ops-exec-${suffix}` },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: BINDING },
        subjects: [{ kind: 'ServiceAccount', name: 'ops', namespace: unlabelled }],
      },
    });
    for (const [namespace, pod] of targets) {
      await eventually(() => execAs(`system:serviceaccount:${unlabelled}:ops`, namespace, pod), (out) => PAST_ADMISSION.test(out), `ops into ${namespace}`);
    }
  });

  it('binds only pods that carry the injected agent: annotations alone never bind', async () => {
    const e = await namespace('team-e', LABELS);
    for (const name of ['annotated', 'status', 'impostor']) await core.createNamespacedServiceAccount({ namespace: e, body: { metadata: { name } } });
    const app = { name: 'app', image: 'busybox' };
    // opted in by annotations only (as a pod annotated after creation looks), a hand-set status, an impostor agent container
    await core.createNamespacedPod({ namespace: e, body: { metadata: { name: 'annotated', annotations: OPT_IN }, spec: { serviceAccountName: 'annotated', containers: [app] } } });
    await core.createNamespacedPod({
      namespace: e,
      body: { metadata: { name: 'status', annotations: { ...OPT_IN, 'xxl-agent/status': '{"profile":"xxl-job"}' } }, spec: { serviceAccountName: 'status', containers: [app] } },
    });
    await core.createNamespacedPod({
      namespace: e,
      body: {
        metadata: { name: 'impostor', annotations: { ...OPT_IN, 'xxl-agent/status': '{"profile":"xxl-job"}' } },
        spec: { serviceAccountName: 'impostor', containers: [app, { name: 'xxl-agent', image: 'docker.io/mallory/shell:1' }] },
      },
    });
    await createPod(kc, e); // the control: a real agent, bound
    await eventually(subjects, (s) => s.includes(sa(e)), 'the real agent bound');
    expect((await subjects())?.filter((s) => s.includes(`${e}/`))).toEqual([sa(e)]);
  });

  it('removes the bindings while the exec guard is missing, says why on /readyz and in an Event, and restores them', async () => {
    const before = await subjects();
    expect(before?.length).toBeGreaterThan(0);
    const admission = kc.makeApiClient(AdmissionregistrationV1Api);
    await admission.deleteValidatingAdmissionPolicyBinding({ name: EXEC_GUARD_NAME });
    await eventually(subjects, (s) => s.length === 0, 'bindings removed');
    const ready = await fetch(`http://127.0.0.1:${portA}/readyz`);
    expect(ready.status).toBe(503);
    expect(await ready.text()).toContain(`exec guard not in force: ValidatingAdmissionPolicyBinding ${EXEC_GUARD_NAME} not found`);
    expect(await metric(portA, 'outrigger_rbac_syncer_exec_guard_in_force')).toBe(0);
    await eventually(
      () => core.listNamespacedEvent({ namespace: 'default', fieldSelector: `involvedObject.kind=ClusterRole,involvedObject.name=${BINDING},reason=ExecGuardMissing` }),
      (list) => (list.items ?? []).some((ev) => ev.type === 'Warning' && ev.message?.includes('not found')),
      'an ExecGuardMissing Warning',
    );
    await installExecGuard(inject('controlPlane').kubeconfigPath);
    await eventually(subjects, (s) => JSON.stringify(s) === JSON.stringify(before), 'bindings restored');
    expect((await fetch(`http://127.0.0.1:${portA}/readyz`)).status).toBe(200);
    expect(await metric(portA, 'outrigger_rbac_syncer_exec_guard_in_force')).toBe(1);
  });

  it('removes the bindings while the guard exists but its CEL was rewritten to allow everything, and restores them', async () => {
    const before = await subjects();
    expect(before?.length).toBeGreaterThan(0);
    const policy = execGuardPolicy('ClusterRoleBinding', EXEC_GUARD_NAME);
    const allowAll = { ...policy, spec: { ...policy.spec, validations: [{ ...policy.spec.validations[0], expression: 'true' }] } };
    await applyObject(loadKubeClient(inject('controlPlane').kubeconfigPath), allowAll, { fieldManager: 'rbac-syncer-e2e', force: true });
    await eventually(subjects, (s) => s.length === 0, 'bindings removed');
    expect(await (await fetch(`http://127.0.0.1:${portA}/readyz`)).text()).toContain(`ValidatingAdmissionPolicy ${EXEC_GUARD_NAME} refuses less than the shipped guard: it lacks 2 of the shipped guard's validations`);
    expect(await metric(portA, 'outrigger_rbac_syncer_exec_guard_in_force')).toBe(0);
    await installExecGuard(inject('controlPlane').kubeconfigPath);
    await eventually(subjects, (s) => JSON.stringify(s) === JSON.stringify(before), 'bindings restored');
    expect(await metric(portA, 'outrigger_rbac_syncer_exec_guard_in_force')).toBe(1);
  });

  it("keeps the bindings under a later version's guard that refuses more (an upgrade applies the guard before the syncer)", async () => {
    const before = await subjects();
    expect(before.length).toBeGreaterThan(0);
    const policy = execGuardPolicy('ClusterRoleBinding', EXEC_GUARD_NAME);
    const tighter = {
      ...policy,
      spec: {
        ...policy.spec,
        variables: [...policy.spec.variables, { name: 'later', expression: "request.name != ''" }],
        validations: [...policy.spec.validations, { expression: '!variables.boundByOutrigger || variables.later', reason: 'Forbidden', message: 'a later version of the guard' }],
      },
    };
    const first = before[0] ?? '';
    const watched = `${BINDING}.${first.slice(first.indexOf(':') + 1, first.indexOf('/'))}`;
    const unchangedSince = await rbac.readClusterRoleBinding({ name: watched });
    const reconciledBefore = (await unchanged(portA)) ?? 0;
    await applyObject(loadKubeClient(inject('controlPlane').kubeconfigPath), tighter, { fieldManager: 'rbac-syncer-e2e', force: true });
    // A change of the guard queues the profile: once that reconcile found nothing to do, the guard was judged and kept the bindings.
    await eventually(() => unchanged(portA), (n) => (n ?? 0) > reconciledBefore, 'the profile reconciled under the tighter guard');
    expect(await subjects()).toEqual(before);
    expect((await rbac.readClusterRoleBinding({ name: watched })).metadata?.resourceVersion).toBe(unchangedSince.metadata?.resourceVersion);
    expect(await metric(portA, 'outrigger_rbac_syncer_exec_guard_in_force')).toBe(1);
    expect(await (await fetch(`http://127.0.0.1:${portA}/readyz`)).text()).not.toContain('refuses less than the shipped guard');
    await installExecGuard(inject('controlPlane').kubeconfigPath);
  });

  it('does not write when a pod event leaves the subject set unchanged', async () => {
    const b = labelled[1] as string;
    const writesBefore = await applies(portA);
    const unchangedBefore = (await unchanged(portA)) ?? 0;
    await createPod(kc, b, 'agent'); // a second pod of an already bound ServiceAccount
    await eventually(() => unchanged(portA), (n) => (n ?? 0) > unchangedBefore, 'a reconcile that found nothing to do');
    expect(await applies(portA)).toBe(writesBefore);
  });

  it('removes a subject after the grace period when its last pod is deleted', async () => {
    const a = labelled[0] as string;
    await deleteAllPods(kc, a);
    await eventually(subjects, (s) => !s.includes(sa(a)) && s.includes(sa(labelled[1] as string, 'agent')), 'subject of the emptied namespace removed');
    // The API server's authorizer follows the binding from its own cache, a moment later.
    await eventually(() => canExec(kc, a, 'default'), (can) => can === false, 'exec refused to the removed subject');
  });

  it('removes a subject at once when its namespace loses the injection label', async () => {
    const c = labelled[2] as string;
    await core.patchNamespace(
      { name: c, body: [{ op: 'remove', path: '/metadata/labels/outrigger.dev~1injection' }] },
      setHeaderOptions('Content-Type', PatchStrategy.JsonPatch),
    );
    await eventually(subjects, (s) => !s.includes(sa(c)), 'subject of the unlabelled namespace removed');
  });

  it('repairs a binding edited by hand', async () => {
    const before = await subjects();
    await rbac.patchClusterRoleBinding(
      { name: `${BINDING}.${labelled[1]}`, body: [{ op: 'replace', path: '/subjects', value: [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'mallory' }] }] },
      setHeaderOptions('Content-Type', PatchStrategy.JsonPatch),
    );
    await eventually(subjects, (s) => JSON.stringify(s) === JSON.stringify(before), 'binding repaired');
  });

  it('repairs ClusterRole rules edited by hand', async () => {
    await rbac.patchClusterRole(
      { name: BINDING, body: [{ op: 'add', path: '/rules/-', value: { apiGroups: [''], resources: ['secrets'], verbs: ['get'] } }] },
      setHeaderOptions('Content-Type', PatchStrategy.JsonPatch),
    );
    const rules = XXL_JOB_PROFILE.rbac?.rules ?? [];
    await eventually(
      async () => (await rbac.readClusterRole({ name: BINDING })).rules?.map((r) => r.resources?.join()),
      (r) => JSON.stringify(r) === JSON.stringify(rules.map((x) => x.resources.join())),
      'ClusterRole rules repaired',
    );
  });

  it('runs one leader among two syncers, and the other takes over when the leader stops', async () => {
    const b = await start(portB, 'syncer-b');
    const leaders = async () => [await metric(portA, 'outrigger_rbac_syncer_leader'), await metric(portB, 'outrigger_rbac_syncer_leader')];
    await eventually(leaders, (v) => JSON.stringify(v) === '[1,0]', 'A leads, B waits');
    // the standby never writes
    expect(await applies(portB)).toBeUndefined();
    await (syncers[0] as ManagedProcess).stop();
    await eventually(() => metric(portB, 'outrigger_rbac_syncer_leader'), (v) => v === 1, 'B leads');
    const d = await namespace('team-d', LABELS);
    await createPod(kc, d);
    await eventually(subjects, (s) => s.includes(sa(d)), 'B binds a new namespace');
    expect(b.running).toBe(true);
  });
});
