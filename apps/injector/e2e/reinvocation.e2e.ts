import { randomBytes } from 'node:crypto';
import { CoreV1Api, type V1Pod } from '@kubernetes/client-node';
import { INJECTION_LABEL_KEY, INJECTION_LABEL_VALUE } from '@outrigger/admission';
import { referenceProfile } from '@outrigger/agent-profiles';
import { createTestNamespace, kubeConfigFrom, poll } from '@outrigger/control-plane';
import { classifyApiError } from '@outrigger/kube';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { reviewsAnswered } from './injector-metrics.js';
import { MIRROR_ANNOTATION, MIRROR_REGISTRY, startMirroringWebhook, type MirroringWebhook } from './mirroring-webhook.js';
import { startWebhookInjector, type WebhookInjector } from './webhook-injector.js';

// The injector reinvoked (reinvocationPolicy IfNeeded) by a real kube-apiserver after a mutating
// webhook ordered after it changed the pod: a change to the application leaves the agent as
// injected, one to the agent itself is refused, naming the container and the likely cause, rather
// than stored as an agent the rbac-syncer would never bind.
const cp = inject('controlPlane');
const kc = kubeConfigFrom(cp.kubeconfigPath);
const core = kc.makeApiClient(CoreV1Api);
const AGENT = referenceProfile().container.name;
const suffix = randomBytes(3).toString('hex');
const optedIn = { 'xxl-agent/enable': 'true', 'xxl-agent/job-addr': 'http://xxl-job-admin.jobs:8080/xxl-job-admin', 'xxl-agent/target-container': 'app', 'xxl-agent/job-name': 'billing' };
let injector: WebhookInjector | undefined;
const answered = () => (injector ? reviewsAnswered(injector.url, injector.ca) : Promise.reject(new Error('the injector did not start')));
let mirror: MirroringWebhook | undefined;
let namespace: string;

function pod(annotations: Record<string, string>): V1Pod {
  return { metadata: { generateName: 'mirrored-', annotations }, spec: { containers: [{ name: 'app', image: 'registry.example/app:1.0' }] } };
}

async function create(body: V1Pod): Promise<{ calls: number; images?: Record<string, string>; refused?: string }> {
  const before = await answered();
  let outcome: { images?: Record<string, string>; refused?: string };
  try {
    const created = await core.createNamespacedPod({ namespace, body });
    outcome = { images: Object.fromEntries((created.spec?.containers ?? []).map((c) => [c.name, c.image ?? ''])) };
  } catch (error) {
    outcome = { refused: classifyApiError(error).message };
  }
  return { calls: (await answered()) - before, ...outcome };
}

beforeAll(async () => {
  namespace = await createTestNamespace(kc, 'reinvoked', { [INJECTION_LABEL_KEY]: INJECTION_LABEL_VALUE });
  // The API server calls webhook configurations in the order of their names.
  injector = await startWebhookInjector(kc, `outrigger-reinvoked-a-${suffix}`, { namespace, pod: pod(optedIn), agent: AGENT });
  mirror = await startMirroringWebhook(kc, `outrigger-reinvoked-z-${suffix}`, [namespace]);
  await poll('the mirroring webhook to be called', async () => {
    const probe = await core.createNamespacedPod({ namespace, body: pod({ [MIRROR_ANNOTATION]: 'app' }), dryRun: 'All' });
    return probe.spec?.containers[0]?.image?.startsWith(`${MIRROR_REGISTRY}/`) ? true : undefined;
  });
});

afterAll(async () => {
  await mirror?.stop();
  await injector?.stop();
});

describe('the injector reinvoked after a later mutating webhook', () => {
  it('keeps the agent when the later webhook changed only the application: called twice, the second time a no-op', async () => {
    const outcome = await create(pod({ ...optedIn, [MIRROR_ANNOTATION]: 'app' }));
    expect(outcome).toEqual({ calls: 2, images: { app: `${MIRROR_REGISTRY}/app:1.0`, [AGENT]: referenceProfile().container.image } });
  });

  it('refuses the pod when the later webhook changed the agent, naming the container and the later webhook', async () => {
    const outcome = await create(pod({ ...optedIn, [MIRROR_ANNOTATION]: `app,${AGENT}` }));
    expect(outcome.calls).toBe(2);
    expect(outcome.refused).toContain(`a ${AGENT} container that is not the injector's (container ${AGENT}: image is not what the injector renders)`);
    expect(outcome.refused).toContain('a mutating webhook called after Outrigger\'s changed the agent');
  });
});
