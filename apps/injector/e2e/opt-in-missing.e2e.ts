import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { INJECTION_LABEL_KEY, INJECTION_LABEL_VALUE } from '@outrigger/admission';
import { REFERENCE_PROFILE_FILE, referenceProfile } from '@outrigger/agent-profiles';
import { createTestNamespace, DEPLOY_DIR, kubeConfigFrom, poll, repoRoot, suiteKubectl } from '@outrigger/control-plane';
import { OPT_IN_MISSING_POLICY_FILE } from '@outrigger/install';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';

// The shipped opt-in-missing policy on a real kube-apiserver, with the reference AgentProfile as its
// parameter: whoever writes a workload whose pods carry annotations under the profile's prefix without
// opting in to it is warned (kubectl prints it), and nothing is refused. Pods are not judged.
const cp = inject('controlPlane');
const kc = kubeConfigFrom(cp.kubeconfigPath);
const { kubectl, getJson, established } = suiteKubectl(cp.kubeconfigPath, cp.binDir);
const PROFILE = referenceProfile().name;
const POLICY_FILE = join(repoRoot(), OPT_IN_MISSING_POLICY_FILE);
const enabled = { [INJECTION_LABEL_KEY]: INJECTION_LABEL_VALUE };
let profileCreated = false;

type Annotations = Record<string, string>;
const podSpec = { containers: [{ name: 'app', image: 'registry.example/app:1.0' }], restartPolicy: 'Never' };
const template = (annotations: Annotations) => ({ metadata: { labels: { app: 'a' }, annotations }, spec: podSpec });
const pod = (annotations: Annotations) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', annotations }, spec: podSpec });
const KINDS = {
  Deployment: (annotations: Annotations) => ({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' }, spec: { selector: { matchLabels: { app: 'a' } }, template: { ...template(annotations), spec: { ...podSpec, restartPolicy: 'Always' } } } }),
  Job: (annotations: Annotations) => ({ apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'j' }, spec: { template: template(annotations) } }),
  CronJob: (annotations: Annotations) => ({ apiVersion: 'batch/v1', kind: 'CronJob', metadata: { name: 'c' }, spec: { schedule: '*/5 * * * *', jobTemplate: { spec: { template: template(annotations) } } } }),
} as const;

/** Writes the object (server-side dry run: admission runs, nothing is stored) and returns kubectl's warnings; throws if it is refused. */
function warnings(namespace: string, object: object): string[] {
  const run = spawnSync(join(cp.binDir, 'kubectl'), ['--kubeconfig', cp.kubeconfigPath, 'create', '--dry-run=server', '-n', namespace, '-o', 'name', '-f', '-'], { input: JSON.stringify(object), encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`kubectl create refused it: ${run.stderr}`);
  return run.stderr.split('\n').filter((line) => line.startsWith('Warning: '));
}

// One warning line each; kubectl prints the API server's "Validation failed for ValidatingAdmissionPolicy …:" before the message,
// which lists the keys in the annotations map's order, none in particular.
const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const expected = (...keys: [string] | [string, string]) =>
  expect.stringMatching(
    new RegExp(
      `: outrigger: profile ${escaped(PROFILE)}: the pod template carries (${[keys.join(', '), [...keys].reverse().join(', ')].map(escaped).join('|')}), ` +
        escaped(`under the profile's prefix, but does not opt in to it (xxl-agent/enable: "true", or ${PROFILE} in outrigger.dev/inject): no agent is injected`) +
        '$',
    ),
  );

beforeAll(async () => {
  kubectl(['apply', '--server-side', '-k', join(DEPLOY_DIR, 'base/crd')]);
  await established(['agentprofiles.outrigger.dev']);
  profileCreated = getJson(['agentprofiles', PROFILE]) === undefined;
  if (profileCreated) kubectl(['apply', '--server-side', '-f', REFERENCE_PROFILE_FILE]);
  kubectl(['apply', '--server-side', '-f', POLICY_FILE]);
  const probe = await createTestNamespace(kc, 'opt-in-probe', enabled);
  // The API server loads a new policy and its parameters asynchronously.
  await poll('the opt-in-missing policy to warn', () => (warnings(probe, KINDS.Job({ 'xxl-agent/inject': 'true' })).length > 0 ? true : undefined), 60_000);
});

afterAll(() => {
  kubectl(['delete', '--ignore-not-found', '-f', POLICY_FILE]);
  if (profileCreated) kubectl(['delete', '--ignore-not-found', 'agentprofiles', PROFILE]);
});

describe('the opt-in-missing policy on a real kube-apiserver', () => {
  it.each(Object.keys(KINDS) as (keyof typeof KINDS)[])('warns, and only warns, for a %s whose pods carry the prefix without opting in', async (kind) => {
    const namespace = await createTestNamespace(kc, 'opt-in-missing', enabled);
    // A misspelt opt-in, and parameters without any opt-in.
    expect(warnings(namespace, KINDS[kind]({ 'xxl-agent/enabled': 'true' }))).toEqual([expected('xxl-agent/enabled')]);
    expect(warnings(namespace, KINDS[kind]({ 'xxl-agent/job-addr': 'http://admin:8080', 'xxl-agent/job-name': 'billing', team: 'a' }))).toEqual([expected('xxl-agent/job-addr', 'xxl-agent/job-name')]);
    // outrigger.dev/inject naming only another profile is no opt-in to this one.
    expect(warnings(namespace, KINDS[kind]({ 'outrigger.dev/inject': 'other, another', 'xxl-agent/job-name': 'billing' }))).toEqual([expected('xxl-agent/job-name')]);
  });

  it.each(Object.keys(KINDS) as (keyof typeof KINDS)[])('is silent for a %s that opts in, opts out, or carries nothing of the profile', async (kind) => {
    const namespace = await createTestNamespace(kc, 'opt-in-present', enabled);
    const silent: Annotations[] = [
      { 'xxl-agent/enable': 'true', 'xxl-agent/job-name': 'billing' },
      { 'xxl-agent/enable': 'false', 'xxl-agent/job-name': 'billing' },
      { 'outrigger.dev/inject': `other, ${PROFILE}`, 'xxl-agent/job-name': 'billing' },
      { team: 'a', 'example.com/xxl-agent': 'x' },
      {},
    ];
    for (const annotations of silent) {
      expect(warnings(namespace, KINDS[kind](annotations)), JSON.stringify(annotations)).toEqual([]);
    }
  });

  it('is silent where the webhook does not inject: a namespace without the injection label', async () => {
    const namespace = await createTestNamespace(kc, 'opt-in-unlabelled');
    expect(warnings(namespace, KINDS.Deployment({ 'xxl-agent/enabled': 'true' }))).toEqual([]);
  });

  it('does not judge pods, whose every create it would slow (their controllers read no warnings)', async () => {
    const namespace = await createTestNamespace(kc, 'opt-in-pod', enabled);
    expect(warnings(namespace, KINDS.Job({ 'xxl-agent/enabled': 'true' }))).toEqual([expected('xxl-agent/enabled')]);
    expect(warnings(namespace, pod({ 'xxl-agent/enabled': 'true' }))).toEqual([]);
  });
});
