import { execFileSync } from 'node:child_process';
import { request } from 'node:https';
import { join } from 'node:path';
import { AdmissionregistrationV1Api, CoreV1Api, type V1Container, type V1Pod } from '@kubernetes/client-node';
import { buildMutatingWebhookConfiguration, encodeCaBundle, INJECTION_LABEL_KEY, INJECTION_LABEL_VALUE } from '@outrigger/admission';
import { createTestNamespace, kubeConfigFrom, poll, repoRoot } from '@outrigger/control-plane';
import { classifyApiError } from '@outrigger/kube';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { reviewsAnswered } from './injector-metrics.js';
import { type RunningInjector, startInjector } from './injector-process.js';
import { registerWebhook, unregisterWebhook, type WebhookProbe } from './webhook-registration.js';

// What the agent may hold and where it may run, through a real kube-apiserver: the agent alone
// holds the ServiceAccount token (serviceAccountToken.agentOnly), and an agent below a namespace's
// enforced Pod Security level is refused by the webhook, naming the profile and the field.
const cp = inject('controlPlane');
const kc = kubeConfigFrom(cp.kubeconfigPath);
const core = kc.makeApiClient(CoreV1Api);
const admissionApi = kc.makeApiClient(AdmissionregistrationV1Api);
const enabled = { [INJECTION_LABEL_KEY]: INJECTION_LABEL_VALUE };
const webhookName = 'outrigger-e2e-agent-confinement';
const TOKEN_PATH = '/var/run/secrets/kubernetes.io/serviceaccount';
const RESTRICTED = { runAsNonRoot: true, runAsUser: 65532, allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] }, seccompProfile: { type: 'RuntimeDefault' } };

/** The suite's own profiles (names, prefixes and containers no other suite uses). */
function profile(name: string, spec: Record<string, unknown>, securityContext: Record<string, unknown> | null = RESTRICTED): object {
  const container = { name: `${name}-agent`, image: 'registry.example/agent:1.0', ...(securityContext ? { securityContext } : {}) };
  return { apiVersion: 'outrigger.dev/v1alpha1', kind: 'AgentProfile', metadata: { name }, spec: { annotationPrefix: `${name}/`, container, ...spec } };
}
const PROFILES = [
  profile('confined', { serviceAccountToken: { agentOnly: true } }),
  profile('confined-keep', { serviceAccountToken: { agentOnly: true, podMayKeepToken: true } }),
  profile('shared', {}),
  profile('baseline-agent', { dangerouslyAllowPodSecurity: 'baseline' }, null),
];
let injector: RunningInjector;
let webhookProbe: WebhookProbe | undefined;

function kubectl(args: readonly string[], input?: string): string {
  return execFileSync(join(cp.binDir, 'kubectl'), ['--kubeconfig', cp.kubeconfigPath, ...args], { encoding: 'utf8', input, stdio: ['pipe', 'pipe', 'pipe'] });
}

function get(path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(new URL(path, injector.baseUrl), { ca: injector.ca, timeout: 10_000 }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk)).on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

function pod(name: string, annotations: Record<string, string>, spec: Partial<V1Pod['spec']> = {}, app: Partial<V1Container> = {}): V1Pod {
  return { metadata: { name, annotations }, spec: { containers: [{ name: 'app', image: 'registry.example/app:1.0', ...app }], ...spec } };
}

async function createError(namespace: string, body: V1Pod, dryRun?: 'All'): Promise<string | undefined> {
  try {
    await core.createNamespacedPod({ namespace, body, ...(dryRun ? { dryRun } : {}) });
    return undefined;
  } catch (error) {
    return classifyApiError(error).message;
  }
}

const mounts = (c: V1Container | undefined) => (c?.volumeMounts ?? []).map((m) => `${m.name}:${m.mountPath}:${m.readOnly === true ? 'ro' : 'rw'}`);

beforeAll(async () => {
  kubectl(['apply', '--server-side', '-k', join(repoRoot(), 'deploy/base/crd')]);
  kubectl(['wait', '--for=condition=Established', '--timeout=60s', 'customresourcedefinitions/agentprofiles.outrigger.dev']);
  kubectl(['apply', '--server-side', '-f', '-'], PROFILES.map((p) => JSON.stringify(p)).join('\n'));
  injector = await startInjector(undefined, { PROFILES_FILE: '', KUBECONFIG: cp.kubeconfigPath });
  const names = ['baseline-agent', 'confined', 'confined-keep', 'shared'];
  await poll('the suite\'s profiles in force and the namespaces listed', async () => {
    const readyz = await get('/readyz');
    const details = readyz.status === 200 ? (JSON.parse(readyz.body) as { details: { profiles: { names: string[] }; namespaces: { status: string } } }).details : undefined;
    return details && names.every((n) => details.profiles.names.includes(n)) && details.namespaces.status === 'up' ? true : undefined;
  });
  const port = Number(new URL(injector.baseUrl).port);
  const configuration = buildMutatingWebhookConfiguration({ name: webhookName, installNamespace: 'outrigger-system', client: { mode: 'url', port }, caBundle: encodeCaBundle(injector.ca), failurePolicy: 'Fail' });
  const probe = await createTestNamespace(kc, 'confine-probe', enabled);
  webhookProbe = { namespace: probe, pod: pod('probe', { 'outrigger.dev/inject': 'shared' }), agent: 'shared-agent' };
  await registerWebhook(admissionApi, core, configuration, webhookProbe);
});

afterAll(async () => {
  await unregisterWebhook(admissionApi, core, webhookName, webhookProbe);
  await injector?.process.stop();
  kubectl(['delete', '--ignore-not-found', 'agentprofile', ...PROFILES.map((p) => (p as { metadata: { name: string } }).metadata.name)]);
});

describe('the agent alone holds the ServiceAccount token', () => {
  it('agentOnly: the application containers mount no token, the agent its own projected one, read-only; one webhook call per create', async () => {
    const namespace = await createTestNamespace(kc, 'confine-token', enabled);
    const before = await reviewsAnswered(injector.baseUrl, injector.ca);
    const created = await core.createNamespacedPod({ namespace, body: pod('alone', { 'outrigger.dev/inject': 'confined' }) });
    // The ServiceAccount plugin runs again after the webhook's patch: with automount off it mounts nothing, so no second call.
    expect(await reviewsAnswered(injector.baseUrl, injector.ca)).toBe(before + 1);
    expect(created.spec?.automountServiceAccountToken).toBe(false);
    const [app, agent] = created.spec?.containers ?? [];
    expect(mounts(app)).toEqual([]);
    expect(mounts(agent)).toEqual([`outrigger-agent-token:${TOKEN_PATH}:ro`]);
    expect(created.spec?.volumes?.map((v) => v.name)).toEqual(['outrigger-agent-token']);
    expect(created.spec?.volumes?.[0]?.projected?.sources?.map((s) => Object.keys(s)[0])).toEqual(['serviceAccountToken', 'configMap', 'downwardAPI']);
  });

  it('keep-pod-token: refused on a profile that does not allow it, naming the annotation and the field; kept where it does', async () => {
    const namespace = await createTestNamespace(kc, 'confine-keep', enabled);
    const refused = await createError(namespace, pod('refused', { 'outrigger.dev/inject': 'confined', 'confined/keep-pod-token': 'true' }));
    expect(refused).toContain('annotation confined/keep-pod-token');
    expect(refused).toContain('spec.serviceAccountToken.podMayKeepToken');

    const kept = await core.createNamespacedPod({ namespace, body: pod('kept', { 'outrigger.dev/inject': 'confined-keep', 'confined-keep/keep-pod-token': 'true' }) });
    const [app, agent] = kept.spec?.containers ?? [];
    expect(kept.spec?.automountServiceAccountToken).toBeUndefined();
    expect(mounts(app)).toEqual([expect.stringMatching(new RegExp(`^kube-api-access-\\w+:${TOKEN_PATH}:ro$`))]);
    expect(mounts(agent)).toEqual([`outrigger-agent-token:${TOKEN_PATH}:ro`]);
  });

  it('a pod that turned its own token off still gets an agent with a token, whatever the profile', async () => {
    const namespace = await createTestNamespace(kc, 'confine-off', enabled);
    for (const name of ['confined', 'shared']) {
      const created = await core.createNamespacedPod({ namespace, body: pod(`off-${name}`, { 'outrigger.dev/inject': name }, { automountServiceAccountToken: false }) });
      const agent = created.spec?.containers.find((c) => c.name === `${name}-agent`);
      expect(mounts(agent), name).toEqual([`outrigger-agent-token:${TOKEN_PATH}:ro`]);
      expect(mounts(created.spec?.containers[0]), name).toEqual([]);
    }
  });
});

describe("the namespace's enforced Pod Security level", () => {
  it('refuses a baseline-only agent where restricted is enforced, naming the profile and the field; admits it in an unlabelled namespace', async () => {
    const strict = await createTestNamespace(kc, 'confine-strict', { ...enabled, 'pod-security.kubernetes.io/enforce': 'restricted' });
    // The application container meets restricted itself: only the agent would not.
    const body = pod('baseline', { 'outrigger.dev/inject': 'baseline-agent' }, {}, { securityContext: RESTRICTED });
    // The injector learns the new namespace's label from its watch: wait for it with dry runs.
    const refusal = await poll('the restricted label to be known', async () => {
      const error = await createError(strict, body, 'All');
      return error?.includes('profile baseline-agent') ? error : undefined;
    });
    expect(await createError(strict, body)).toBe(refusal);
    expect(refusal).toContain('profile baseline-agent');
    expect(refusal).toContain('spec.dangerouslyAllowPodSecurity');
    expect(refusal).toContain('pod-security.kubernetes.io/enforce');

    const open = await createTestNamespace(kc, 'confine-open', enabled);
    const admitted = await core.createNamespacedPod({ namespace: open, body });
    expect(admitted.spec?.containers.map((c) => c.name)).toEqual(['app', 'baseline-agent-agent']);
  });

  it('admits a restricted agent into a restricted namespace, where Pod Security itself then passes the pod', async () => {
    const strict = await createTestNamespace(kc, 'confine-fits', { ...enabled, 'pod-security.kubernetes.io/enforce': 'restricted' });
    const created = await core.createNamespacedPod({ namespace: strict, body: pod('fits', { 'outrigger.dev/inject': 'confined' }, {}, { securityContext: RESTRICTED }) });
    expect(created.spec?.containers.map((c) => c.name)).toEqual(['app', 'confined-agent']);
  });
});
