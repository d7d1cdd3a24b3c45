import { randomBytes } from 'node:crypto';
import { CoreV1Api, type V1Container, type V1Pod } from '@kubernetes/client-node';
import { INJECTION_LABEL_KEY, INJECTION_LABEL_VALUE } from '@outrigger/admission';
import { join } from 'node:path';
import { agentProfileObject, REFERENCE_PROFILE_FILE, referenceProfile } from '@outrigger/agent-profiles';
import { createTestNamespace, DEPLOY_DIR, kubeConfigFrom, poll, repoRoot, suiteKubectl } from '@outrigger/control-plane';
import { FORGED_AGENT_POLICY_FILE, forgedAgentBinding, forgedAgentPolicy } from '@outrigger/install';
import { classifyApiError } from '@outrigger/kube';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { reviewsAnswered } from './injector-metrics.js';
import { startWebhookInjector, type WebhookInjector } from './webhook-injector.js';

// The webhook's `marked-pods` match condition on a real kube-apiserver, with the shipped
// forged-agent policy and the reference AgentProfile as its parameter: a pod in a labelled namespace
// that neither opts in nor carries a status annotation never reaches the injector (0 calls, counted
// by the injector's own metric), and if it brings a container named like the agent the policy
// refuses it; pods that opt in or carry a status annotation still reach the injector.
const cp = inject('controlPlane');
const kc = kubeConfigFrom(cp.kubeconfigPath);
const { kubectl, getJson, established } = suiteKubectl(cp.kubeconfigPath, cp.binDir);
let profileCreated = false;
const core = kc.makeApiClient(CoreV1Api);
const enabled = { [INJECTION_LABEL_KEY]: INJECTION_LABEL_VALUE };
const webhookName = `outrigger-marked-${randomBytes(3).toString('hex')}`;
const AGENT = referenceProfile().container.name;
let started: WebhookInjector | undefined;
let injectorUrl: string;
let injectorCa: string;

const APP: V1Container = { name: 'app', image: 'registry.example/app:1.0' };
const optedIn = { 'xxl-agent/enable': 'true', 'xxl-agent/job-addr': 'http://xxl-job-admin.jobs:8080/xxl-job-admin', 'xxl-agent/target-container': 'app', 'xxl-agent/job-name': 'billing' };

function pod(annotations: Record<string, string>, containers: V1Container[] = [APP], initContainers?: V1Container[]): V1Pod {
  return { metadata: { generateName: 'p-', annotations }, spec: { containers, ...(initContainers ? { initContainers } : {}) } };
}

/** Creates the pod; its outcome (stored containers, or the refusal) and how many reviews the injector answered meanwhile. */
async function create(namespace: string, body: V1Pod): Promise<{ calls: number; containers?: string[]; refused?: string }> {
  const before = await reviewsAnswered(injectorUrl, injectorCa);
  let outcome: { containers?: string[]; refused?: string };
  try {
    const created = await core.createNamespacedPod({ namespace, body });
    outcome = { containers: [...(created.spec?.initContainers ?? []), ...(created.spec?.containers ?? [])].map((c) => c.name) };
  } catch (error) {
    outcome = { refused: classifyApiError(error).message };
  }
  return { calls: (await reviewsAnswered(injectorUrl, injectorCa)) - before, ...outcome };
}

const POLICY_FILE = join(repoRoot(), FORGED_AGENT_POLICY_FILE);

beforeAll(async () => {
  kubectl(['apply', '--server-side', '-k', join(DEPLOY_DIR, 'base/crd')]);
  await established(['agentprofiles.outrigger.dev']);
  profileCreated = getJson(['agentprofiles', referenceProfile().name]) === undefined;
  if (profileCreated) kubectl(['apply', '--server-side', '-f', REFERENCE_PROFILE_FILE]);
  kubectl(['apply', '--server-side', '-f', POLICY_FILE]);
  const probe = await createTestNamespace(kc, 'marked-probe', enabled);
  started = await startWebhookInjector(kc, webhookName, { namespace: probe, pod: pod(optedIn), agent: AGENT });
  injectorUrl = started.url;
  injectorCa = started.ca;
  // The API server loads a new policy and its parameters asynchronously.
  await poll('the forged-agent policy to refuse an agent-named container', async () => (await create(probe, pod({}, [APP, { name: AGENT, image: 'registry.example/agent:1' }]))).refused);
});

afterAll(async () => {
  await started?.stop();
  kubectl(['delete', '--ignore-not-found', '-f', POLICY_FILE]);
  if (profileCreated) kubectl(['delete', '--ignore-not-found', 'agentprofiles', referenceProfile().name]);
});

describe('the marked-pods match condition and the forged-agent policy on a real kube-apiserver', () => {
  it('a pod that does not opt in, in a labelled namespace, causes 0 webhook calls', async () => {
    const namespace = await createTestNamespace(kc, 'marked-plain', enabled);
    expect(await create(namespace, pod({}))).toEqual({ calls: 0, containers: ['app'] });
    expect(await create(namespace, pod({ 'example.com/enabled': 'true', 'example.com/statusz': 'x', team: 'billing' }))).toEqual({ calls: 0, containers: ['app'] });
  });

  it('refuses, without a webhook call, a pod that does not opt in and brings a container with the agent name', async () => {
    const namespace = await createTestNamespace(kc, 'marked-forged', enabled);
    const refusal = `profile ${referenceProfile().name}: the pod has a container named ${AGENT}, the name of the profile's agent, and does not opt in`;
    const ownAgent = await create(namespace, pod({}, [APP, { name: AGENT, image: 'registry.example/agent:1' }]));
    expect(ownAgent).toMatchObject({ calls: 0, refused: expect.stringContaining(refusal) });
    expect(ownAgent.refused).toContain(`ValidatingAdmissionPolicy 'outrigger-forged-agent'`);
    const ownInitAgent = await create(namespace, pod({ team: 'billing' }, [APP], [{ name: AGENT, image: 'registry.example/agent:1' }]));
    expect(ownInitAgent).toMatchObject({ calls: 0, refused: expect.stringContaining(refusal) });
    // An exact copy of the agent's image is no more an agent: only the injector adds it.
    const copied = await create(namespace, pod({}, [APP, { name: AGENT, image: referenceProfile().container.image }]));
    expect(copied).toMatchObject({ calls: 0, refused: expect.stringContaining(refusal) });
  });

  it('still sends an opted-in pod, and every pod with a status annotation; the webhook refuses their forgeries', async () => {
    const namespace = await createTestNamespace(kc, 'marked-sent', enabled);
    expect(await create(namespace, pod(optedIn))).toEqual({ calls: 1, containers: ['app', AGENT] });
    expect(await create(namespace, pod({ 'outrigger.dev/inject': 'xxl-job', ...optedIn, 'xxl-agent/enable': 'false' }))).toMatchObject({ calls: 1, containers: ['app'] });
    const forgedStatus = await create(namespace, pod({ 'xxl-agent/status': '{"profile":"xxl-job"}' }));
    expect(forgedStatus).toMatchObject({ calls: 1, refused: expect.stringContaining('annotation xxl-agent/status is set but the pod has no xxl-agent container') });
    const optedOutAgent = await create(namespace, pod({ 'xxl-agent/enable': 'false' }, [APP, { name: AGENT, image: 'registry.example/agent:1' }]));
    expect(optedOutAgent).toMatchObject({ calls: 1, refused: expect.stringContaining(`container ${AGENT} has the name of the profile's agent but is not it`) });
    // Any profile's prefix, known to the injector or not: the condition does not list prefixes.
    expect(await create(namespace, pod({ 'new-agent.example.com/enable': 'true' }))).toEqual({ calls: 1, containers: ['app'] });
  });

  it('refuses the agent name of every AgentProfile, each named, one evaluation per profile', async () => {
    const suffix = randomBytes(3).toString('hex');
    const { rbac: _rbac, ...reference } = referenceProfile();
    const second = { ...reference, name: `second-${suffix}`, annotationPrefix: `second-${suffix}.example.com/`, container: { ...reference.container, name: `second-agent-${suffix}` } };
    kubectl(['apply', '--server-side', '-f', '-'], JSON.stringify(agentProfileObject(second)));
    try {
      const namespace = await createTestNamespace(kc, 'marked-second', enabled);
      const secondAgent = { name: second.container.name, image: 'registry.example/agent:1' };
      // The API server picks up a new parameter object asynchronously.
      const refused = await poll('the policy to judge the second profile', async () => (await create(namespace, pod({}, [APP, secondAgent]))).refused);
      expect(refused).toContain(`profile ${second.name}: the pod has a container named ${second.container.name}, the name of the profile's agent, and does not opt in`);
      expect((await create(namespace, pod({}, [APP, { name: AGENT, image: 'registry.example/agent:1' }]))).refused).toContain(`profile ${referenceProfile().name}: the pod has a container named ${AGENT}`);
      expect(await create(namespace, pod({}))).toEqual({ calls: 0, containers: ['app'] });
    } finally {
      kubectl(['delete', '--ignore-not-found', 'agentprofiles', second.name]);
    }
  });

  it('judges nothing in a namespace not labelled for injection', async () => {
    const namespace = await createTestNamespace(kc, 'marked-unlabelled');
    expect(await create(namespace, pod({}, [APP, { name: AGENT, image: 'registry.example/agent:1' }]))).toEqual({ calls: 0, containers: ['app', AGENT] });
  });

  it('with its parameters unresolvable (no such CRD), fails closed only where the webhook serves', async () => {
    // The shipped policy and binding under another name, their parameter kind one that does not exist.
    const name = `outrigger-forged-broken-${randomBytes(3).toString('hex')}`;
    const policy = forgedAgentPolicy(name);
    const broken = { ...policy, spec: { ...policy.spec, paramKind: { apiVersion: 'outrigger.dev/v1alpha1', kind: 'NoSuchProfile' } } };
    const binding = forgedAgentBinding(name);
    kubectl(['apply', '--server-side', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [broken, binding] }));
    try {
      const labelled = await createTestNamespace(kc, 'marked-broken', enabled);
      await poll('the broken policy to be in force', async () => (await create(labelled, pod({}))).refused);
      expect((await create(labelled, pod({}))).refused).toContain('failed to configure policy');
      const unlabelled = await createTestNamespace(kc, 'marked-broken-off');
      expect(await create(unlabelled, pod({}))).toEqual({ calls: 0, containers: ['app'] });
      // No controller-manager here to give kube-system its ServiceAccount.
      if (getJson(['serviceaccount', 'default', '-n', 'kube-system']) === undefined) kubectl(['create', 'serviceaccount', 'default', '-n', 'kube-system']);
      expect(await create('kube-system', pod({}))).toEqual({ calls: 0, containers: ['app'] });
    } finally {
      kubectl(['delete', '--ignore-not-found', 'validatingadmissionpolicybinding', name]);
      kubectl(['delete', '--ignore-not-found', 'validatingadmissionpolicy', name]);
    }
  });
});
