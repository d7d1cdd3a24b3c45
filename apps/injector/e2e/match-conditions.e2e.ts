import { randomBytes } from 'node:crypto';
import { request as httpsRequest } from 'node:https';
import { CoreV1Api, type V1Container, type V1Pod } from '@kubernetes/client-node';
import { INJECTION_LABEL_KEY, INJECTION_LABEL_VALUE } from '@outrigger/admission';
import { referenceProfile } from '@outrigger/agent-profiles';
import { createTestNamespace, kubeConfigFrom } from '@outrigger/control-plane';
import { classifyApiError } from '@outrigger/kube';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startWebhookInjector, type WebhookInjector } from './webhook-injector.js';

// The webhook's `marked-pods` match condition on a real kube-apiserver: a pod in a labelled
// namespace that neither opts in nor carries anything the forged-agent refusal needs never
// reaches the injector (0 calls, counted by the injector's own metric); the others still do.
const cp = inject('controlPlane');
const kc = kubeConfigFrom(cp.kubeconfigPath);
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

/** Reviews the injector has answered, all outcomes together. */
async function admissionRequests(): Promise<number> {
  const text = await new Promise<string>((resolve, reject) => {
    const req = httpsRequest(`${injectorUrl}/metrics`, { ca: injectorCa }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString('utf8')));
      res.on('end', () => resolve(body));
    });
    req.on('error', reject);
    req.end();
  });
  return [...text.matchAll(/^outrigger_injector_admission_requests_total\{[^}]*\} (\d+)$/gm)].reduce((sum, m) => sum + Number(m[1]), 0);
}

/** Creates the pod; its outcome (stored containers, or the refusal) and how many reviews the injector answered meanwhile. */
async function create(namespace: string, body: V1Pod): Promise<{ calls: number; containers?: string[]; refused?: string }> {
  const before = await admissionRequests();
  let outcome: { containers?: string[]; refused?: string };
  try {
    const created = await core.createNamespacedPod({ namespace, body });
    outcome = { containers: [...(created.spec?.initContainers ?? []), ...(created.spec?.containers ?? [])].map((c) => c.name) };
  } catch (error) {
    outcome = { refused: classifyApiError(error).message };
  }
  return { calls: (await admissionRequests()) - before, ...outcome };
}

beforeAll(async () => {
  const probe = await createTestNamespace(kc, 'marked-probe', enabled);
  started = await startWebhookInjector(kc, webhookName, { namespace: probe, pod: pod(optedIn), agent: AGENT }, { skipUnmarkedPods: { agentContainerNames: [AGENT] } });
  injectorUrl = started.url;
  injectorCa = started.ca;
});

afterAll(async () => {
  await started?.stop();
});

describe('the marked-pods match condition on a real kube-apiserver', () => {
  it('a pod that does not opt in, in a labelled namespace, causes 0 webhook calls', async () => {
    const namespace = await createTestNamespace(kc, 'marked-plain', enabled);
    expect(await create(namespace, pod({}))).toEqual({ calls: 0, containers: ['app'] });
    expect(await create(namespace, pod({ 'example.com/enabled': 'true', 'example.com/statusz': 'x', team: 'billing' }))).toEqual({ calls: 0, containers: ['app'] });
  });

  it('still sends an opted-in pod, and every pod the forged-agent refusal needs (status annotation, agent-named container)', async () => {
    const namespace = await createTestNamespace(kc, 'marked-sent', enabled);
    expect(await create(namespace, pod(optedIn))).toEqual({ calls: 1, containers: ['app', AGENT] });
    expect(await create(namespace, pod({ 'outrigger.dev/inject': 'xxl-job', ...optedIn, 'xxl-agent/enable': 'false' }))).toMatchObject({ calls: 1, containers: ['app'] });
    const forgedStatus = await create(namespace, pod({ 'xxl-agent/status': '{"profile":"xxl-job"}' }));
    expect(forgedStatus).toMatchObject({ calls: 1, refused: expect.stringContaining('annotation xxl-agent/status is set but the pod has no xxl-agent container') });
    const ownAgent = await create(namespace, pod({}, [APP, { name: AGENT, image: 'registry.example/agent:1' }]));
    expect(ownAgent).toMatchObject({ calls: 1, refused: expect.stringContaining(`container ${AGENT} has the name of the profile's agent but is not it`) });
    const ownInitAgent = await create(namespace, pod({}, [APP], [{ name: AGENT, image: 'registry.example/agent:1' }]));
    expect(ownInitAgent).toMatchObject({ calls: 1, refused: expect.stringContaining(`container ${AGENT} has the name of the profile's agent but is not it`) });
    // Any profile's prefix, known to the injector or not: the condition does not list prefixes.
    expect(await create(namespace, pod({ 'new-agent.example.com/enable': 'true' }))).toEqual({ calls: 1, containers: ['app'] });
  });
});
