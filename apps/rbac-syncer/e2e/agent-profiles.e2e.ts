import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api } from '@kubernetes/client-node';
import { agentFor, type AgentProfile, agentProfileObject, agentProfileSchema, agentVariants, profileHash, referenceProfile } from '@outrigger/agent-profiles';
import { createTestNamespace, freePort, kubeConfigFrom, repoRoot, type ManagedProcess } from '@outrigger/control-plane';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { stringify } from 'yaml';
import { bindingSubjects, canExec, createPod, deleteAllPods, eventually, LABELS, metric, optIn, sa, startSyncer } from './support.js';

// The syncer with AgentProfiles from the API: a profile takes effect, follows an edit, reports on
// its status, survives a bad edit and, deleted, leaves an emptied binding behind after the grace.
const cp = inject('controlPlane');
const kc = kubeConfigFrom(cp.kubeconfigPath);
const dir = mkdtempSync(join(tmpdir(), 'rbac-syncer-profiles-'));
const NAME = 'api-profile-exec';
const reference = referenceProfile();
const profile: AgentProfile = { ...reference, rbac: { clusterRole: NAME, binding: { kind: 'ClusterRoleBinding', name: NAME }, rules: reference.rbac?.rules ?? [] } };
const SPEC_CHANGE_LAG_MS = 2_000;
let syncer: ManagedProcess | undefined;
let port = 0;
let own = '';
const namespaces: string[] = [];

function kubectl(args: readonly string[], input?: string): string {
  return execFileSync(join(cp.binDir, 'kubectl'), ['--kubeconfig', cp.kubeconfigPath, ...args], { encoding: 'utf8', input, stdio: ['pipe', 'pipe', 'pipe'] });
}

interface Status {
  observedGeneration?: number;
  boundSubjects?: number;
  namespaces?: number;
  agents?: { current: number; outdated: number; missing: number; canary?: number; outdatedRevisions: { revision: string; pods: number }[] };
  conditions?: { type: string; status: string; reason: string; message: string; observedGeneration?: number }[];
}

/** The profile's spec exactly as given (a replace drops what earlier patches set), created if it is not there. */
function putProfile(spec: AgentProfile): void {
  const yaml = stringify(agentProfileObject(spec));
  const exists = kubectl(['get', 'agentprofile', spec.name, '--ignore-not-found', '-o', 'name']).trim() !== '';
  kubectl([exists ? 'replace' : 'create', '-f', '-'], yaml);
}

const status = async (): Promise<Status> => (JSON.parse(kubectl(['get', 'agentprofile', profile.name, '-o', 'json'])) as { status?: Status }).status ?? {};
const condition = (s: Status, type: string) => s.conditions?.find((c) => c.type === type);

/** putProfile, then waits until the syncer has accepted that generation: pods made next are judged against it, not the one before. */
async function putAccepted(spec: AgentProfile, what: string): Promise<void> {
  putProfile(spec);
  const generation = Number(kubectl(['get', 'agentprofile', spec.name, '-o', 'jsonpath={.metadata.generation}']));
  await eventually(status, (s) => condition(s, 'Accepted')?.observedGeneration === generation && condition(s, 'Accepted')?.status === 'True', what);
}

beforeAll(async () => {
  kubectl(['apply', '--server-side', '-k', join(repoRoot(), 'deploy/base/crd')]);
  kubectl(['wait', '--for=condition=Established', '--timeout=60s', 'customresourcedefinitions/agentprofiles.outrigger.dev']);
  own = await createTestNamespace(kc, 'profiles-sys');
  port = await freePort();
  syncer = await startSyncer({ kubeconfigPath: cp.kubeconfigPath, namespace: own, lease: NAME, port, name: 'profiles-syncer', dir, env: { SPEC_CHANGE_LAG: `${SPEC_CHANGE_LAG_MS}ms` } });
});

afterAll(async () => {
  await syncer?.stop();
  // The other suites count every opted-in pod on this API server.
  for (const ns of namespaces) await deleteAllPods(kc, ns);
  kubectl(['delete', '--ignore-not-found', 'agentprofile', profile.name]);
});

describe('rbac-syncer with AgentProfiles from the API', () => {
  it('binds for a new profile within seconds and says so on its status', async () => {
    const ns = await createTestNamespace(kc, 'profiles-a', LABELS);
    namespaces.push(ns);
    await createPod(kc, ns);
    kubectl(['apply', '--server-side', '-f', '-'], stringify(agentProfileObject(profile)));
    await eventually(() => bindingSubjects(kc, NAME), (s) => s.includes(sa(ns)), 'the new profile to bind');
    const synced = await eventually(status, (s) => condition(s, 'Synced')?.status === 'True' && (s.boundSubjects ?? 0) >= 1, 'the status');
    expect(synced.observedGeneration).toBe(1);
    expect(condition(synced, 'Accepted')).toMatchObject({ status: 'True', reason: 'Valid', observedGeneration: 1 });
    expect(condition(synced, 'Synced')?.message).toMatch(new RegExp(`^ClusterRoleBinding ${NAME}\\.<namespace> \\(one per namespace\\) binds the ServiceAccounts of live agents to ClusterRole ${NAME}$`));
    // kubectl get shows it in the printer columns.
    const table = kubectl(['get', 'agentprofile', profile.name]);
    expect(table.split('\n')[1]).toMatch(/^xxl-job\s+xxl-agent\/\s+.*ClusterRoleBinding\s+True\s+True\s+\d+\s+/);
  });

  it('follows an edit of the rules, and keeps the last good generation through a bad one', async () => {
    const rules = [...(profile.rbac?.rules ?? []), { apiGroups: [''], resources: ['pods/log'], verbs: ['get'] }];
    kubectl(['patch', 'agentprofile', profile.name, '--type=merge', '-p', JSON.stringify({ spec: { rbac: { rules } } })]);
    await eventually(
      async () => JSON.parse(kubectl(['get', 'clusterrole', NAME, '-o', 'json'])) as { rules: { resources: string[] }[] },
      (role) => role.rules.some((r) => r.resources.includes('pods/log')),
      'the ClusterRole to follow the edit',
    );
    // A pattern the API server cannot judge; the services can.
    kubectl(['patch', 'agentprofile', profile.name, '--type=json', '-p', '[{"op":"add","path":"/spec/parameters/2/pattern","value":"(unclosed"}]']);
    const refused = await eventually(status, (s) => condition(s, 'Accepted')?.status === 'False', 'the bad generation to be refused');
    expect(condition(refused, 'Accepted')).toMatchObject({ reason: 'Invalid', observedGeneration: 3 });
    expect(condition(refused, 'Accepted')?.message).toMatch(/^spec\.parameters\[2\]\.pattern: is not an RE2 regular expression .* \(generation 2 stays in force\)$/);
    expect(condition(refused, 'Synced')).toMatchObject({ status: 'True', observedGeneration: 2 });
    const role = JSON.parse(kubectl(['get', 'clusterrole', NAME, '-o', 'json'])) as { rules: { resources: string[] }[] };
    expect(role.rules.some((r) => r.resources.includes('pods/log'))).toBe(true);
  });

  it('says on its status why the API server refused a write of the binding, and recovers', async () => {
    const freeze = `${NAME}-freeze`;
    const policy = {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name: freeze },
      spec: {
        failurePolicy: 'Fail',
        matchConstraints: { resourceRules: [{ apiGroups: ['rbac.authorization.k8s.io'], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['clusterrolebindings'] }] },
        validations: [{ expression: `!object.metadata.name.startsWith('${NAME}.')`, message: 'frozen by the e2e suite' }],
      },
    };
    const binding = { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingAdmissionPolicyBinding', metadata: { name: freeze }, spec: { policyName: freeze, validationActions: ['Deny'] } };
    kubectl(['apply', '--server-side', '-f', '-'], [policy, binding].map((o) => stringify(o)).join('---\n'));
    try {
      // In force once a server-side dry run of a write to the binding is refused.
      const dryRun = () => {
        try {
          kubectl(['label', '--dry-run=server', '--overwrite', 'clusterrolebinding', `${NAME}.${namespaces[0]}`, 'e2e-probe=1']);
          return '';
        } catch (error) {
          return String((error as { stderr?: string }).stderr);
        }
      };
      await eventually(async () => dryRun(), (out) => out.includes('frozen by the e2e suite'), 'the freezing policy in force');
      const ns = await createTestNamespace(kc, 'profiles-b', LABELS);
      namespaces.push(ns);
      await createPod(kc, ns);
      const failed = await eventually(status, (s) => condition(s, 'Synced')?.reason === 'WriteFailed', 'the refused write on the status');
      expect(condition(failed, 'Synced')?.status).toBe('False');
      expect(condition(failed, 'Synced')?.message).toMatch(new RegExp(`^ClusterRoleBinding ${NAME} not in sync, retrying: HTTP \\d{3} .*frozen by the e2e suite`));
      expect(await bindingSubjects(kc, NAME)).not.toContain(sa(ns));
    } finally {
      kubectl(['delete', '--ignore-not-found', 'validatingadmissionpolicybinding', freeze]);
      kubectl(['delete', '--ignore-not-found', 'validatingadmissionpolicy', freeze]);
    }
    // The retry runs on its backoff; a pod event reconciles at once.
    const ns = await createTestNamespace(kc, 'profiles-c', LABELS);
    namespaces.push(ns);
    await createPod(kc, ns);
    await eventually(() => bindingSubjects(kc, NAME), (s) => s.includes(sa(ns)), 'the binding written again');
    const recovered = await eventually(status, (s) => condition(s, 'Synced')?.status === 'True', 'the status to recover');
    expect(condition(recovered, 'Synced')?.reason).toBe('Synced');
  });

  it('binds nothing to a ClusterRole Outrigger does not own, even with every name granted, and never suggests granting it', async () => {
    const grab: AgentProfile = {
      ...reference,
      name: 'admin-grab',
      annotationPrefix: 'grab/',
      container: { ...reference.container, name: 'grab-agent' },
      rbac: { clusterRole: 'cluster-admin', binding: { kind: 'ClusterRoleBinding', name: 'grab-exec' }, rules: reference.rbac?.rules ?? [] },
    };
    const ns = await createTestNamespace(kc, 'grab', LABELS);
    namespaces.push(ns);
    await kc.makeApiClient(CoreV1Api).createNamespacedServiceAccount({ namespace: ns, body: { metadata: { name: 'grabber' } } });
    await createPod(kc, ns, 'grabber', true, grab);
    kubectl(['apply', '--server-side', '-f', '-'], stringify(agentProfileObject(grab)));
    try {
      const grabStatus = async () => (JSON.parse(kubectl(['get', 'agentprofile', grab.name, '-o', 'json'])) as { status?: Status }).status ?? {};
      const refused = await eventually(grabStatus, (s) => condition(s, 'Synced')?.reason === 'ForeignClusterRole', 'ForeignClusterRole on the status');
      expect(condition(refused, 'Synced')?.status).toBe('False');
      expect(condition(refused, 'Synced')?.message).toContain('ClusterRole cluster-admin exists and is not managed by Outrigger');
      expect(condition(refused, 'Synced')?.message).not.toMatch(/grant/i);
      expect(await bindingSubjects(kc, 'grab-exec')).toEqual([]);
      const role = JSON.parse(kubectl(['get', 'clusterrole', 'cluster-admin', '-o', 'json'])) as { metadata: { labels?: Record<string, string> } };
      expect(role.metadata.labels?.['app.kubernetes.io/managed-by']).toBeUndefined();
      expect(await canExec(kc, ns, 'grabber')).toBe(false);
    } finally {
      kubectl(['delete', '--ignore-not-found', 'agentprofile', grab.name]);
    }
  });

  it('counts opted-in pods by the agent they run, names the outdated revision, and tells the workload whose pods miss it', async () => {
    // A profile of its own (no RBAC), so pods of other suites never count for it.
    const { rbac: _, ...withoutRbac } = reference;
    const probe: AgentProfile = { ...withoutRbac, name: 'count-probe', annotationPrefix: 'count-probe/', container: { ...reference.container, name: 'count-probe' } };
    const probeStatus = async () => (JSON.parse(kubectl(['get', 'agentprofile', probe.name, '-o', 'json'])) as { status?: Status }).status ?? {};
    const ns = await createTestNamespace(kc, 'counts', LABELS);
    namespaces.push(ns);
    kubectl(['apply', '--server-side', '-f', '-'], stringify(agentProfileObject(probe)));
    try {
      await createPod(kc, ns, 'default', true, probe);
      await createPod(kc, ns, 'default', true, probe);
      // A Deployment's pods created while the webhook was not called: opted in, no agent. (No
      // controller-manager runs here: the ReplicaSet and its pods are written as it would.)
      const apps = (kind: string, name: string, extra: object) => ({ apiVersion: 'apps/v1', kind, metadata: { name, namespace: ns, labels: { app: 'shop' } }, ...extra });
      const template = { metadata: { labels: { app: 'shop' } }, spec: { containers: [{ name: 'app', image: 'busybox' }] } };
      const spec = { replicas: 2, selector: { matchLabels: { app: 'shop' } }, template };
      const deployment = JSON.parse(kubectl(['create', '-o', 'json', '-f', '-'], JSON.stringify(apps('Deployment', 'shop', { spec })))) as { metadata: { uid: string } };
      const owner = (kind: string, name: string, uid: string) => [{ apiVersion: 'apps/v1', kind, name, uid, controller: true }];
      const replicaSet = JSON.parse(
        kubectl(['create', '-o', 'json', '-f', '-'], JSON.stringify({ ...apps('ReplicaSet', 'shop-5d8f', { spec }), metadata: { name: 'shop-5d8f', namespace: ns, labels: { app: 'shop' }, ownerReferences: owner('Deployment', 'shop', deployment.metadata.uid) } })),
      ) as { metadata: { uid: string } };
      for (const name of ['shop-5d8f-a', 'shop-5d8f-b']) {
        const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: ns, annotations: optIn(probe), ownerReferences: owner('ReplicaSet', 'shop-5d8f', replicaSet.metadata.uid) }, spec: template.spec };
        kubectl(['create', '-f', '-'], JSON.stringify(pod));
      }
      const counted = await eventually(probeStatus, (s) => s.agents?.current === 2 && s.agents.missing === 2, 'the counts on the status');
      expect(counted.agents).toEqual({ current: 2, outdated: 0, missing: 2, outdatedRevisions: [] });
      expect(await metric(port, 'outrigger_rbac_syncer_agent_pods', ['profile="count-probe"', 'state="missing"'])).toBe(2);
      // The owner hears of it on the Deployment, not on its ReplicaSet.
      const events = await eventually(
        async () => JSON.parse(kubectl(['get', 'events', '-n', ns, '--field-selector', 'reason=AgentMissing', '-o', 'json'])) as { items: { involvedObject: { kind: string; name: string; uid: string }; message: string; type: string }[] },
        (list) => list.items.length > 0,
        'an AgentMissing event',
      );
      expect(events.items).toHaveLength(1);
      expect(events.items[0]).toMatchObject({ type: 'Warning', involvedObject: { kind: 'Deployment', name: 'shop', uid: deployment.metadata.uid } });
      // As many pods as it had seen then: one or both.
      expect(events.items[0]?.message).toMatch(new RegExp(`^[12] pod\\(s\\) opted into AgentProfile count-probe but run without its agent \\(created while the injector was not called\\); with the injector serving, restart them to get it: outrigger rollout restart --missing --profile count-probe -n ${ns}$`));
      // A new agent: the running ones are outdated, by the revision that injected them.
      kubectl(['patch', 'agentprofile', probe.name, '--type=merge', '-p', JSON.stringify({ spec: { container: { image: `${probe.container.image}-next` } } })]);
      const outdated = await eventually(probeStatus, (s) => s.agents?.outdated === 2, 'the pods counted as outdated');
      expect(outdated.agents).toEqual({ current: 0, outdated: 2, missing: 2, outdatedRevisions: [{ revision: `count-probe-${profileHash(probe)}`, pods: 2 }] });
      const row = kubectl(['get', 'agentprofile', probe.name]).split('\n');
      expect(row[0]).toMatch(/\bCURRENT\s+OUTDATED\s+MISSING\b/);
      expect(row[1]).toMatch(/\s0\s+2\s+2\s/);
      // Pods that go are no longer counted.
      await deleteAllPods(kc, ns);
      await eventually(probeStatus, (s) => s.agents?.outdated === 0 && s.agents.missing === 0, 'the counts after the pods went');
    } finally {
      kubectl(['delete', '--ignore-not-found', 'agentprofile', probe.name]);
    }
  });

  it('stages a change for one namespace: its pods get the new agent and count as canary, both agents stay bound through a rollback', async () => {
    const ns = await createTestNamespace(kc, 'canary', LABELS);
    namespaces.push(ns);
    await kc.makeApiClient(CoreV1Api).createNamespacedServiceAccount({ namespace: ns, body: { metadata: { name: 'early' } } });
    // The profile as at first (an earlier test left an invalid generation), staging a new image for this namespace.
    const staged = agentProfileSchema.parse({ ...profile, canary: { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': ns } }, image: `${profile.container.image}-next` } });
    await putAccepted(staged, 'the staged change accepted');
    // The pod as the injector admits it in that namespace: with the canary agent.
    await createPod(kc, ns, 'early', true, agentFor(staged, { 'kubernetes.io/metadata.name': ns }));
    await eventually(() => bindingSubjects(kc, NAME), (s) => s.includes(sa(ns, 'early')), 'the canary agent bound');
    const counted = await eventually(status, (s) => s.agents?.canary === 1, 'the canary pod counted');
    expect(counted.agents?.current).toBeGreaterThanOrEqual(1);
    // Both agents are kept as revisions, so either stays verified after a promotion or a rollback.
    const revisions = kubectl(['get', 'controllerrevisions', '-n', own, '-o', 'jsonpath={.items[*].metadata.name}']).split(' ');
    const { stable, canary } = agentVariants(staged);
    expect(revisions).toEqual(expect.arrayContaining([`${profile.name}-${profileHash(stable)}`, `${profile.name}-${profileHash(canary?.profile as AgentProfile)}`]));
    // Roll back: the canary pod is now outdated, and its ServiceAccount never leaves the binding.
    kubectl(['patch', 'agentprofile', profile.name, '--type=json', '-p', '[{"op":"remove","path":"/spec/canary"}]']);
    const samples: boolean[] = [];
    const outdated = await eventually(
      async () => (samples.push((await bindingSubjects(kc, NAME)).includes(sa(ns, 'early'))), status()),
      (s) => s.agents?.canary === undefined && (s.agents?.outdatedRevisions ?? []).some((r) => r.revision === `${profile.name}-${profileHash(canary?.profile as AgentProfile)}`),
      'the canary pod outdated after the rollback',
    );
    for (let i = 0; i < 15; i++) {
      samples.push((await bindingSubjects(kc, NAME)).includes(sa(ns, 'early')));
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(outdated.agents?.outdated).toBeGreaterThanOrEqual(1);
    expect(samples.every(Boolean)).toBe(true);
  });

  it('scoped by spec.namespaceSelector, binds and counts only in the namespaces it picks, and unbinds a namespace labelled out', async () => {
    const [inside, outside] = [await createTestNamespace(kc, 'scope-in', { ...LABELS, team: 'jobs' }), await createTestNamespace(kc, 'scope-out', LABELS)];
    namespaces.push(inside, outside);
    const scoped = agentProfileSchema.parse({ ...profile, namespaceSelector: { matchLabels: { team: 'jobs' } } });
    await putAccepted(scoped, 'the scope accepted');
    // Pods as the webhook injected them before the scope (the selector changes nothing of the agent): both carry it.
    await createPod(kc, inside, 'default', true, profile);
    await createPod(kc, outside, 'default', true, profile);
    const bound = await eventually(() => bindingSubjects(kc, NAME), (s) => s.includes(sa(inside)), 'the selected namespace bound');
    expect(bound).not.toContain(sa(outside));
    // Only the namespaces labelled team=jobs (this test's, and none of the others') take part; the
    // namespace count and the pod counts are written by separate reconciles, so wait for both.
    const counted = await eventually(status, (s) => s.namespaces === 1 && s.agents?.current === 1, 'the scoped status: 1 namespace, 1 current agent');
    expect(counted.agents?.outdated ?? 0).toBe(0);
    // Labelled out: no longer selected, unbound after the grace like an unlabelled namespace.
    kubectl(['label', 'namespace', inside, 'team-']);
    await eventually(() => bindingSubjects(kc, NAME), (s) => !s.includes(sa(inside)), 'the namespace labelled out unbound');
    await eventually(status, (s) => s.namespaces === 0, 'no namespace selected');
    // Unscoped again: every labelled namespace takes part.
    putProfile(profile);
    await eventually(() => bindingSubjects(kc, NAME), (s) => s.includes(sa(outside)), 'the profile unscoped binding everywhere');
  });

  it("binds an earlier spec's agent only in pods created while it was in force: one written by hand after an edit never is", async () => {
    const ns = await createTestNamespace(kc, 'earlier', LABELS);
    namespaces.push(ns);
    const core = kc.makeApiClient(CoreV1Api);
    for (const name of ['before', 'after', 'control']) await core.createNamespacedServiceAccount({ namespace: ns, body: { metadata: { name } } });
    putProfile(profile);
    await createPod(kc, ns, 'before', true, profile);
    await eventually(() => bindingSubjects(kc, NAME), (s) => s.includes(sa(ns, 'before')), 'the pod injected from the spec in force bound');
    // An admin changes the agent: the earlier spec's revision is marked as replaced.
    const edited: AgentProfile = { ...profile, container: { ...profile.container, image: `${profile.container.image}-edited` } };
    putProfile(edited);
    const revision = `${profile.name}-${profileHash(profile)}`;
    const replacedAt = await eventually(
      async () => kubectl(['get', 'controllerrevision', revision, '-n', own, '-o', 'jsonpath={.metadata.annotations.outrigger\\.dev/replaced-at}']),
      (value) => value !== '',
      'the earlier revision marked as replaced',
    );
    await new Promise((r) => setTimeout(r, Math.max(0, Date.parse(replacedAt) + SPEC_CHANGE_LAG_MS + 1_000 - Date.now())));
    // The webhook not called (failurePolicy: Ignore, no injector), a tenant writes the earlier agent by hand; then a pod as injected now.
    await createPod(kc, ns, 'after', true, profile);
    await createPod(kc, ns, 'control', true, edited);
    // The control pod's event comes after the hand-written one's: once it is bound, that one has been judged.
    const bound = await eventually(() => bindingSubjects(kc, NAME), (s) => s.includes(sa(ns, 'control')), 'the pod injected from the edited spec bound');
    expect(bound).toContain(sa(ns, 'before'));
    expect(bound).not.toContain(sa(ns, 'after'));
    // A rollback puts the spec back in force: its mark goes, and its agent is current again.
    putProfile(profile);
    await eventually(() => bindingSubjects(kc, NAME), (s) => s.includes(sa(ns, 'after')), 'the spec rolled back to binding again');
    await eventually(async () => kubectl(['get', 'controllerrevision', revision, '-n', own, '-o', 'jsonpath={.metadata.annotations}']), (a) => !a.includes('replaced-at'), 'the mark gone');
  });

  it('removes the bindings of a deleted profile after the grace period', async () => {
    expect((await bindingSubjects(kc, NAME))?.length).toBeGreaterThan(0);
    kubectl(['delete', 'agentprofile', profile.name]);
    await eventually(() => bindingSubjects(kc, NAME), (s) => s.length === 0, 'the bindings to be removed');
  });
});
