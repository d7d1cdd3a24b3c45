import { randomBytes } from 'node:crypto';
import { CoreV1Api, type V1Pod } from '@kubernetes/client-node';
import { INJECTION_LABEL_KEY, INJECTION_LABEL_VALUE } from '@outrigger/admission';
import { createTestNamespace, kubeConfigFrom } from '@outrigger/control-plane';
import { classifyApiError } from '@outrigger/kube';
import { referenceProfile } from '@outrigger/agent-profiles';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { reviewsAnswered } from './injector-metrics.js';
import { startWebhookInjector, type WebhookInjector } from './webhook-injector.js';

const cp = inject('controlPlane');
const kc = kubeConfigFrom(cp.kubeconfigPath);
const core = kc.makeApiClient(CoreV1Api);
const REFERENCE = referenceProfile();
const enabled = { [INJECTION_LABEL_KEY]: INJECTION_LABEL_VALUE };
const webhookName = `outrigger-e2e-${randomBytes(3).toString('hex')}`;
let started: WebhookInjector | undefined;
let injectorUrl: string;
let injectorCa: string;

function pod(annotations: Record<string, string>, name?: string): V1Pod {
  return {
    metadata: { ...(name ? { name } : { generateName: 'web-' }), annotations },
    spec: { containers: [{ name: 'app', image: 'registry.example/app:1.0' }] },
  };
}

const optedIn = {
  'xxl-agent/enable': 'true',
  'xxl-agent/job-addr': 'http://xxl-job-admin.jobs:8080/xxl-job-admin',
  'xxl-agent/target-container': 'app',
  'xxl-agent/job-name': 'billing',
};

async function createError(namespace: string, body: V1Pod): Promise<string> {
  try {
    await core.createNamespacedPod({ namespace, body });
  } catch (error) {
    return classifyApiError(error).message;
  }
  throw new Error('the create succeeded');
}

beforeAll(async () => {
  const probe = await createTestNamespace(kc, 'probe', enabled);
  started = await startWebhookInjector(kc, webhookName, { namespace: probe, pod: pod(optedIn), agent: 'xxl-agent' });
  injectorUrl = started.url;
  injectorCa = started.ca;
});

afterAll(async () => {
  await started?.stop();
});

describe('injector registered with a real kube-apiserver', () => {
  it('stores an opted-in pod with its agent, configured from the annotations', async () => {
    const namespace = await createTestNamespace(kc, 'inject', enabled);
    await core.createNamespacedPod({ namespace, body: pod(optedIn, 'billing') });
    const stored = await core.readNamespacedPod({ namespace, name: 'billing' });
    expect(stored.spec?.containers.map((c) => c.name)).toEqual(['app', 'xxl-agent']);
    const agent = stored.spec?.containers[1] ?? { name: 'missing' };
    const env = Object.fromEntries((agent.env ?? []).map((e) => [e.name, e.value ?? e.valueFrom?.fieldRef?.fieldPath]));
    expect(env).toMatchObject({
      XXL_JOB_ADDR: optedIn['xxl-agent/job-addr'],
      CONTAINER_NAME: 'app',
      XXL_JOB_NAME: 'billing',
      NAMESPACE: 'metadata.namespace',
      POD_NAME: 'metadata.name',
    });
    expect(agent.ports).toEqual([expect.objectContaining({ name: 'http-xxl-agent', containerPort: 9999 })]);
    expect(JSON.parse(stored.metadata?.annotations?.['xxl-agent/status'] ?? '{}')).toMatchObject({ profile: 'xxl-job' });
  });

  it('injects a controller-style pod that has only generateName and no namespace in the object', async () => {
    const namespace = await createTestNamespace(kc, 'generated', enabled);
    const created = await core.createNamespacedPod({ namespace, body: pod(optedIn) });
    expect(created.metadata?.name).toMatch(/^web-/);
    expect(created.spec?.containers.map((c) => c.name)).toContain('xxl-agent');
  });

  it('leaves a pod that did not opt in untouched', async () => {
    const namespace = await createTestNamespace(kc, 'optout', enabled);
    const created = await core.createNamespacedPod({ namespace, body: pod({ 'xxl-agent/enable': 'false' }, 'plain') });
    expect(created.spec?.containers.map((c) => c.name)).toEqual(['app']);
    expect(created.metadata?.annotations?.['xxl-agent/status']).toBeUndefined();
  });

  it('refuses an opted-in pod with a missing parameter, naming the annotation', async () => {
    const namespace = await createTestNamespace(kc, 'invalid', enabled);
    const { ['xxl-agent/job-addr']: _dropped, ...missing } = optedIn;
    expect(await createError(namespace, pod(missing, 'broken'))).toMatch(/xxl-agent\/job-addr/);
    expect(await createError(namespace, pod({ ...optedIn, 'xxl-agent/target-container': 'nope' }, 'broken'))).toMatch(/xxl-agent\/target-container/);
    expect(await createError(namespace, pod({ ...optedIn, 'xxl-agent/enable': 'yes' }, 'broken'))).toMatch(/xxl-agent\/enable/);
    await expect(core.readNamespacedPod({ namespace, name: 'broken' })).rejects.toThrow();
  });

  it('answers a server-side dry run with the mutated pod and stores nothing', async () => {
    const namespace = await createTestNamespace(kc, 'dryrun', enabled);
    const created = await core.createNamespacedPod({ namespace, body: pod(optedIn, 'dry'), dryRun: 'All' });
    expect(created.spec?.containers.map((c) => c.name)).toEqual(['app', 'xxl-agent']);
    const listed = await core.listNamespacedPod({ namespace });
    expect(listed.items).toEqual([]);
  });

  it('does not touch pods in a namespace without the injection label', async () => {
    const namespace = await createTestNamespace(kc, 'unlabelled');
    const created = await core.createNamespacedPod({ namespace, body: pod(optedIn, 'skipped') });
    expect(created.spec?.containers.map((c) => c.name)).toEqual(['app']);
  });

  it('is idempotent: a pod that already carries the injected agent exactly (a copied spec) gets no second one; a copy without its token volume is refused', async () => {
    const namespace = await createTestNamespace(kc, 'twice', enabled);
    const first = await core.createNamespacedPod({ namespace, body: pod(optedIn, 'first') });
    // As `kubectl get pod -o yaml` and re-create would: the agent, its token volume, the pod's token off.
    const { containers, volumes, automountServiceAccountToken } = first.spec ?? { containers: [] };
    const copy: V1Pod = { metadata: { name: 'copy', annotations: first.metadata?.annotations }, spec: { containers, volumes, automountServiceAccountToken } };
    const created = await core.createNamespacedPod({ namespace, body: copy });
    expect(created.spec?.containers.map((c) => c.name)).toEqual(['app', 'xxl-agent']);
    const partial: V1Pod = { metadata: { name: 'partial', annotations: first.metadata?.annotations }, spec: { containers } };
    expect(await createError(namespace, partial)).toMatch(/profile xxl-job: the pod carries annotation xxl-agent\/status and a xxl-agent container that is not the injector's \(volume outrigger-agent-token is not what the injector writes\)/);
  });

  it('is called once per pod create: the reference profile (agentOnly) turns the pod\'s token off, so the ServiceAccount plugin mounts nothing on reinvocation', async () => {
    const namespace = await createTestNamespace(kc, 'once', enabled);
    const before = await reviewsAnswered(injectorUrl, injectorCa);
    const created = await core.createNamespacedPod({ namespace, body: pod(optedIn, 'once') });
    expect(await reviewsAnswered(injectorUrl, injectorCa)).toBe(before + 1);
    const [app, agent] = created.spec?.containers ?? [];
    expect(created.spec?.automountServiceAccountToken).toBe(false);
    expect(app?.volumeMounts ?? []).toEqual([]);
    // The profile's own mounts and volumes, and the agent's token: nothing the ServiceAccount plugin added.
    expect(agent?.volumeMounts).toEqual([...(REFERENCE.container.volumeMounts ?? []), { name: 'outrigger-agent-token', readOnly: true, mountPath: '/var/run/secrets/kubernetes.io/serviceaccount' }]);
    expect(created.spec?.volumes?.map((v) => v.name)).toEqual(['outrigger-agent-token', ...(REFERENCE.volumes ?? []).map((v) => v.name)]);
  });

  it('refuses an opted-in pod that brings its own container with the agent name, saying why', async () => {
    const namespace = await createTestNamespace(kc, 'impostor', enabled);
    const withAgent = pod(optedIn, 'impostor');
    withAgent.spec?.containers.push({ name: 'xxl-agent', image: 'registry.example/custom-agent:2' });
    const refused = await createError(namespace, withAgent);
    expect(refused).toMatch(/container xxl-agent has the name of the profile's agent but is not it \(image .*registry\.example\/custom-agent:2.* in containers; the agent is .* in containers\); rename the container/);
    expect(refused).toContain(`the agent is ${REFERENCE.container.image} in containers`);
  });
});
