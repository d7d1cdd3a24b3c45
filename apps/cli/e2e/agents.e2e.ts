import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { profileHash, REFERENCE_PROFILE_FILE, referenceProfile } from '@outrigger/agent-profiles';
import { type KubeClient, type KubeRequest, loadKubeClient } from '@outrigger/kube';
import { REPLACED_AT_ANNOTATION, revisionObject } from '@outrigger/sidecar';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { scanAgents } from '../src/agents/agent-scan.reader.js';

// `outrigger agents` and `outrigger rollout restart` on a real API server: real owner chains
// (ReplicaSet -> Deployment, Job -> CronJob, ...), pods injected by `outrigger inject` (the
// webhook's code path) before and after the AgentProfile changed, read a page at a time.
const bin = fileURLToPath(new URL('../bin/outrigger.js', import.meta.url));
const CRD = fileURLToPath(new URL('../../../deploy/base/crd/agentprofiles.outrigger.dev.yaml', import.meta.url));
const { kubeconfigPath, binDir } = inject('controlPlane');
const NS = 'agents-e2e';
const OPTED_IN = { 'xxl-agent/enable': 'true', 'xxl-agent/job-addr': 'http://xxl-job-admin.jobs:8080/xxl-job-admin', 'xxl-agent/target-container': 'app', 'xxl-agent/job-name': 'e2e' };
const dir = mkdtempSync(join(tmpdir(), 'outrigger-agents-e2e-'));

function kubectl(args: string[], input?: string): string {
  return execFileSync(join(binDir, 'kubectl'), ['--kubeconfig', kubeconfigPath, ...args], { encoding: 'utf8', input, stdio: ['pipe', 'pipe', 'pipe'] });
}

function outrigger(args: string[], input?: string) {
  return spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8', input, env: { ...process.env, KUBECONFIG: kubeconfigPath } });
}

function uidOf(resource: string, name: string): string {
  return kubectl(['-n', NS, 'get', resource, name, '-o', 'jsonpath={.metadata.uid}']);
}

const template = { metadata: { labels: { app: 'x' } }, spec: { containers: [{ name: 'app', image: 'app:1' }] } };
const selector = { matchLabels: { app: 'x' } };

/** Opted-in pods controlled by `owner` (none: bare), as a List. */
function pods(prefix: string, count: number, owner?: { apiVersion: string; kind: string; name: string; uid: string }, annotations: Record<string, string> = OPTED_IN) {
  return {
    apiVersion: 'v1',
    kind: 'List',
    items: Array.from({ length: count }, (_, i) => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: `${prefix}-${i}`, namespace: NS, annotations, ...(owner ? { ownerReferences: [{ ...owner, controller: true }] } : {}) },
      spec: { containers: [{ name: 'app', image: 'app:1' }] },
    })),
  };
}

/** Creates the pods through `outrigger inject` with the given profiles file, or as they are (no agent). */
function createPods(list: object, profilesFile?: string | null): void {
  let text = JSON.stringify(list);
  if (profilesFile !== null) {
    const injected = outrigger(['inject', ...(profilesFile ? ['--profiles', profilesFile] : [])], text);
    expect(injected.status, injected.stderr).toBe(0);
    text = injected.stdout;
  }
  kubectl(['create', '-f', '-'], text);
}

const owner = (apiVersion: string, kind: string, resource: string, name: string) => ({ apiVersion, kind, name, uid: uidOf(resource, name) });

beforeAll(() => {
  kubectl(['apply', '--server-side', '-f', CRD]);
  kubectl(['wait', '--for=condition=Established', 'crd/agentprofiles.outrigger.dev', '--timeout=60s']);
  kubectl(['apply', '--server-side', '-f', REFERENCE_PROFILE_FILE]);
  kubectl(['create', 'namespace', NS]);
  kubectl(['label', 'namespace', NS, 'outrigger.dev/injection=enabled']);
  // Opted in, but where the webhook never injects: not counted.
  kubectl(['create', 'namespace', `${NS}-unlabelled`]);
  kubectl(['-n', `${NS}-unlabelled`, 'create', 'serviceaccount', 'default']);
  kubectl(['-n', `${NS}-unlabelled`, 'create', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'elsewhere', annotations: OPTED_IN }, spec: template.spec }));
  kubectl(['-n', NS, 'create', 'serviceaccount', 'default']);
  const workloads = [
    { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web' }, spec: { replicas: 3, selector, template } },
    { apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name: 'pg' }, spec: { replicas: 2, serviceName: 'pg', selector, template } },
    { apiVersion: 'apps/v1', kind: 'DaemonSet', metadata: { name: 'node' }, spec: { selector, template } },
    { apiVersion: 'batch/v1', kind: 'CronJob', metadata: { name: 'nightly' }, spec: { schedule: '0 3 * * *', jobTemplate: { spec: { template: { spec: { ...template.spec, restartPolicy: 'Never' } } } } } },
    { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'once' }, spec: { template: { spec: { ...template.spec, restartPolicy: 'Never' } } } },
    { apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: 'lone' }, spec: { replicas: 2, selector, template } },
  ];
  kubectl(['-n', NS, 'create', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: workloads }));
  // What the Deployment and CronJob controllers would make (no controller-manager runs here).
  kubectl(['-n', NS, 'create', '-f', '-'], JSON.stringify({ apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: 'web-1', ownerReferences: [{ ...owner('apps/v1', 'Deployment', 'deployment', 'web'), controller: true }] }, spec: { replicas: 3, selector, template } }));
  kubectl(['-n', NS, 'create', '-f', '-'], JSON.stringify({ apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'nightly-1', ownerReferences: [{ ...owner('batch/v1', 'CronJob', 'cronjob', 'nightly'), controller: true }] }, spec: { template: { spec: { ...template.spec, restartPolicy: 'Never' } } } }));

  // Injected from the reference profile, which then changes its agent's image: these are outdated.
  createPods(pods('web-1', 20, owner('apps/v1', 'ReplicaSet', 'replicaset', 'web-1')));
  createPods(pods('nightly-1', 1, owner('batch/v1', 'Job', 'job', 'nightly-1')));
  kubectl(['patch', 'agentprofile', 'xxl-job', '--type=merge', '-p', JSON.stringify({ spec: { container: { image: 'ghcr.io/outrigger/xxl-agent:1.0.1' } } })]);
  const changed = join(dir, 'profiles.yaml');
  writeFileSync(changed, kubectl(['get', 'agentprofile', 'xxl-job', '-o', 'yaml']));
  // Injected from the profile in force: current.
  createPods(pods('web-1-new', 5, owner('apps/v1', 'ReplicaSet', 'replicaset', 'web-1')), changed);
  createPods(pods('pg', 2, owner('apps/v1', 'StatefulSet', 'statefulset', 'pg')), changed);
  createPods(pods('once', 1, owner('batch/v1', 'Job', 'job', 'once')), changed);
  // Never injected: missing.
  createPods(pods('lone', 2, owner('apps/v1', 'ReplicaSet', 'replicaset', 'lone')), null);
  createPods(pods('node', 1, owner('apps/v1', 'DaemonSet', 'daemonset', 'node')), null);
  createPods(pods('debug', 1), null);
  createPods(pods('widget', 1, { apiVersion: 'example.com/v1', kind: 'Widget', name: 'w', uid: '9b1deb4d-3b7d-4bad-9bdd-2b0d7b3dcb6d' }), null);
  // Not counted: not opted in, or finished.
  createPods(pods('plain', 3, undefined, {}), null);
  createPods(pods('finished', 1), null);
  kubectl(['-n', NS, 'patch', 'pod', 'finished-0', '--subresource=status', '--type=merge', '-p', '{"status":{"phase":"Succeeded"}}']);
});

// The other suites of this run share the API server (standalone.e2e.ts checks a cluster without Outrigger).
afterAll(() => {
  kubectl(['delete', 'namespace', NS, `${NS}-unlabelled`, '--wait=false']);
  kubectl(['delete', '-f', CRD, '--wait=true']);
});

const EXPECTED = [
  ['CronJob', 'nightly', { pods: 1, current: 0, outdated: 1, missing: 0 }],
  ['DaemonSet', 'node', { pods: 1, current: 0, outdated: 0, missing: 1 }],
  ['Deployment', 'web', { pods: 25, current: 5, outdated: 20, missing: 0 }],
  ['Job', 'once', { pods: 1, current: 1, outdated: 0, missing: 0 }],
  ['Pod', 'debug-0', { pods: 1, current: 0, outdated: 0, missing: 1 }],
  ['ReplicaSet', 'lone', { pods: 2, current: 0, outdated: 0, missing: 2 }],
  ['StatefulSet', 'pg', { pods: 2, current: 2, outdated: 0, missing: 0 }],
  ['Widget', 'w', { pods: 1, current: 0, outdated: 0, missing: 1 }],
] as const;

describe('outrigger agents on a real API server', () => {
  it('reads the pods a page at a time, resolves each ReplicaSet and Job once, and tallies one row per workload', async () => {
    const real = loadKubeClient(kubeconfigPath);
    const requests: KubeRequest[] = [];
    const counting: KubeClient = { server: real.server, request: (r) => (requests.push(r), real.request(r)) };
    const scan = await scanAgents(counting, { namespace: NS, profile: undefined, installNamespace: 'outrigger-system', pageSize: 10 });

    expect(scan.rows.map((r) => [r.workload.kind, r.workload.name, { pods: r.pods, current: r.current, outdated: r.outdated, missing: r.missing }])).toEqual(EXPECTED);
    expect(scan.pods).toBe(34);
    expect(scan.rows.find((r) => r.workload.kind === 'Widget')?.workload.known).toBe(false);
    // 38 pods (34 opted in and live, 3 not opted in, 1 finished) in pages of 10, each after the first continuing the list.
    const pages = requests.filter((r) => r.path === `/api/v1/namespaces/${NS}/pods`);
    expect(pages.length).toBe(4);
    expect(pages.every((r) => r.query?.['limit'] === 10)).toBe(true);
    expect(pages.slice(1).every((r) => typeof r.query?.['continue'] === 'string')).toBe(true);
    const lookups = requests.map((r) => r.path).filter((p) => /\/(replicasets|jobs)\//.test(p));
    // Only once the list is read: a lookup between pages could outlast the continue token.
    const lastPage = requests.findLastIndex((r) => r.path === `/api/v1/namespaces/${NS}/pods`);
    expect(requests.findIndex((r) => /\/(replicasets|jobs)\//.test(r.path))).toBeGreaterThan(lastPage);
    expect(lookups.sort()).toEqual([`/apis/apps/v1/namespaces/${NS}/replicasets/lone`, `/apis/apps/v1/namespaces/${NS}/replicasets/web-1`, `/apis/batch/v1/namespaces/${NS}/jobs/nightly-1`, `/apis/batch/v1/namespaces/${NS}/jobs/once`]);
    // The outdated agents name the reference profile's hash; the spec in force is the changed one.
    const web = scan.rows.find((r) => r.workload.name === 'web');
    expect(web?.revisions.map((v) => [v.pods, v.current])).toEqual([[5, true], [20, false]]);
    expect(web?.revisions[0]?.hash).toBe(scan.profiles[0]?.hash);
  });

  it('-o json and --outdated / --missing through the built CLI', () => {
    const all = outrigger(['agents', '-n', NS, '-o', 'json']);
    expect(all.status, all.stderr).toBe(0);
    const parsed = JSON.parse(all.stdout) as { pods: number; workloads: { kind: string; name: string; outdated: number; missing: number }[] };
    expect(parsed.workloads.map((w) => `${w.kind}/${w.name}`)).toEqual(EXPECTED.map(([kind, name]) => `${kind}/${name}`));

    const outdated = outrigger(['agents', '-n', NS, '--outdated']);
    expect(outdated.status, outdated.stderr).toBe(0);
    const names = (text: string) => text.trim().split('\n').slice(1).map((line) => line.split(/\s+/)[1]);
    expect(names(outdated.stdout)).toEqual(['CronJob/nightly', 'Deployment/web']);
    expect(outdated.stdout.split('\n')[0]).toMatch(/^NAMESPACE\s+WORKLOAD\s+PROFILE\s+PODS\s+CURRENT\s+OUTDATED\s+MISSING\s+REVISIONS$/);
    expect(names(outrigger(['agents', '-n', NS, '--missing']).stdout)).toEqual(['DaemonSet/node', 'Pod/debug-0', 'ReplicaSet/lone', 'Widget/w']);
    expect(outrigger(['agents', '-n', `${NS}-unlabelled`]).stderr).toMatch(/namespace agents-e2e-unlabelled does not take part \(not labelled outrigger.dev\/injection=enabled, or a system namespace\)/);
    const everywhere = JSON.parse(outrigger(['agents', '-A', '-o', 'json']).stdout) as { pods: number };
    expect(everywhere.pods).toBe(34);
    expect(outrigger(['agents', '--profile', 'nope']).stderr).toMatch(/^outrigger agents: --profile nope: no such AgentProfile in force \(in force: xxl-job\)/);
  });

  it('counts an earlier spec\'s agents the injector cannot have written: pods created after SPEC_CHANGE_LAG had passed since it was replaced', async () => {
    // The spec the 20 outdated web pods were injected from, stored as the rbac-syncer stores it, in an install namespace of this suite's own.
    const install = `${NS}-install`;
    kubectl(['create', 'namespace', install]);
    try {
      const stored = revisionObject(referenceProfile(), 1, install);
      kubectl(['create', '-f', '-'], JSON.stringify(stored));
      const kc = loadKubeClient(kubeconfigPath);
      const oldRevision = async () => {
        const scan = await scanAgents(kc, { namespace: NS, profile: undefined, installNamespace: install });
        return { lag: scan.specChangeLag, web: scan.rows.find((r) => r.workload.name === 'web')?.revisions.find((v) => !v.current) };
      };
      const markReplaced = (at: string) => kubectl(['-n', install, 'annotate', '--overwrite', 'controllerrevision', stored.metadata.name, `${REPLACED_AT_ANNOTATION}=${at}`]);

      // Not marked: still in force as far as anyone knows, so every pod of it counts as injected.
      let seen = await oldRevision();
      expect(seen.web).toEqual({ hash: profileHash(referenceProfile()), pods: 20, current: false, known: true, notInjected: 0 });
      expect(seen.lag).toEqual({ ms: 300_000, from: `the default SPEC_CHANGE_LAG of 5m (no Deployment ${install}/outrigger-rbac-syncer)` });

      // Replaced long before these pods were created, with the lag the syncer's Deployment sets.
      const syncer = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'outrigger-rbac-syncer', namespace: install }, spec: { selector: { matchLabels: { app: 's' } }, template: { metadata: { labels: { app: 's' } }, spec: { containers: [{ name: 'rbac-syncer', image: 's:1', env: [{ name: 'SPEC_CHANGE_LAG', value: '1m' }] }] } } } };
      kubectl(['create', '-f', '-'], JSON.stringify(syncer));
      markReplaced('2026-01-01T00:00:00Z');
      seen = await oldRevision();
      expect(seen.web).toMatchObject({ pods: 20, known: true, notInjected: 20 });
      expect(seen.lag).toEqual({ ms: 60_000, from: `SPEC_CHANGE_LAG=1m on Deployment ${install}/outrigger-rbac-syncer` });
      const text = outrigger(['agents', '-n', NS, '--outdated', '--install-namespace', install]);
      expect(text.stdout).toMatch(new RegExp(`Deployment/web .*${profileHash(referenceProfile())}: 20 \\(20 not from the injector\\)`));
      expect(text.stderr).toContain(`earlier specs' agents were judged with SPEC_CHANGE_LAG=1m on Deployment ${install}/outrigger-rbac-syncer`);

      // Replaced only now: the pods were created while it was in force.
      markReplaced(new Date().toISOString());
      expect((await oldRevision()).web).toMatchObject({ pods: 20, known: true, notInjected: 0 });
    } finally {
      kubectl(['delete', 'namespace', install, '--wait=false']);
    }
  });
});

describe('outrigger rollout restart on a real API server', () => {
  it('refuses to guess what or where', () => {
    expect(outrigger(['rollout', 'restart', '-n', NS]).stderr).toMatch(/--outdated, --missing or both/);
    expect(outrigger(['rollout', 'restart', '--outdated']).stderr).toMatch(/-n NAMESPACE or -A/);
    expect(outrigger(['rollout', 'restart', '--outdated', '-A', '--max-in-flight', '0']).stderr).toMatch(/--max-in-flight must be a whole number of at least 1/);
    expect(outrigger(['rollout', 'restart', '--outdated', '-A', '--timeout', '10']).stderr).toMatch(/--timeout: "10" is not a duration/);
  });

  it('--dry-run: skips what it cannot restart, with reasons; a Deployment its controller never observed counts as rolling', () => {
    const result = outrigger(['rollout', 'restart', '--outdated', '--missing', '-n', NS, '--dry-run']);
    expect(result.status, result.stderr).toBe(0);
    expect(result.stdout).toContain(`skip     ${NS}/Pod/debug-0 (1 pod): a bare pod: nothing re-creates it`);
    expect(result.stdout).toContain(`skip     ${NS}/CronJob/nightly (1 pod): a CronJob: its next run gets the agent in force`);
    expect(result.stdout).toContain(`skip     ${NS}/ReplicaSet/lone (2 pods): a ReplicaSet no Deployment owns`);
    expect(result.stdout).toContain(`skip     ${NS}/Widget/w (1 pod): controlled by Widget (example.com/v1), which outrigger does not restart`);
    expect(result.stdout).toMatch(new RegExp(`skip     ${NS}/Deployment/web \\(20 pods\\): already rolling out \\(waiting for the Deployment controller`));
    expect(result.stdout).toMatch(/\ndry run: would restart 0, skip 6\n$/);
    expect(kubectl(['-n', NS, 'get', 'deployment', 'web', '-o', 'jsonpath={.spec.template.metadata.annotations}'])).toBe('');
  });

  it('patches the pod template as kubectl rollout restart does, waits, and exits 1 when the rollout times out', () => {
    // Its status as the Deployment controller would have written it after the last rollout.
    const status = { observedGeneration: 1, replicas: 3, updatedReplicas: 3, readyReplicas: 3, availableReplicas: 3 };
    kubectl(['-n', NS, 'patch', 'deployment', 'web', '--subresource=status', '--type=merge', '-p', JSON.stringify({ status })]);
    const result = outrigger(['rollout', 'restart', '--outdated', '-n', NS, '--timeout', '3s']);
    expect(result.status, result.stdout + result.stderr).toBe(1);
    expect(result.stdout).toContain(`restart  ${NS}/Deployment/web (20 pods) [1/1]`);
    expect(result.stdout).toMatch(new RegExp(`TIMEOUT  ${NS}/Deployment/web: still rolling after 3 s: waiting for the Deployment controller to observe the change`));
    expect(result.stdout).toMatch(/\nrestarted 0, failed 0, timed out 1, skipped 1\n$/);
    const annotations = JSON.parse(kubectl(['-n', NS, 'get', 'deployment', 'web', '-o', 'jsonpath={.spec.template.metadata.annotations}'])) as Record<string, string>;
    expect(Object.keys(annotations)).toEqual(['kubectl.kubernetes.io/restartedAt']);
    expect(annotations['kubectl.kubernetes.io/restartedAt']).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  });
});
