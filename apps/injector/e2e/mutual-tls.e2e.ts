import { randomBytes } from 'node:crypto';
import { request } from 'node:https';
import { AdmissionregistrationV1Api, CoreV1Api, type V1Pod } from '@kubernetes/client-node';
import { buildMutatingWebhookConfiguration, encodeCaBundle, INJECTION_LABEL_KEY, INJECTION_LABEL_VALUE } from '@outrigger/admission';
import { createTestNamespace, kubeConfigFrom } from '@outrigger/control-plane';
import { issueCertificate, type Issued } from '@outrigger/pki';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startInjector, type RunningInjector } from './injector-process.ts';
import { registerWebhook, unregisterWebhook, type WebhookProbe } from './webhook-registration.ts';

// The injector with CLIENT_CA_FILE: only callers with a certificate from that CA may ask /mutate.
// The control plane's admission configuration makes kube-apiserver present one, signed by it.
const cp = inject('controlPlane');
const kc = kubeConfigFrom(cp.kubeconfigPath);
const core = kc.makeApiClient(CoreV1Api);
const admissionApi = kc.makeApiClient(AdmissionregistrationV1Api);
const webhookName = `outrigger-mtls-e2e-${randomBytes(3).toString('hex')}`;
let webhookProbe: WebhookProbe | undefined;
let injector: RunningInjector;
let namespace: string;

const optedIn = {
  'xxl-agent/enable': 'true',
  'xxl-agent/job-addr': 'http://xxl-job-admin.jobs:8080/xxl-job-admin',
  'xxl-agent/target-container': 'app',
  'xxl-agent/job-name': 'billing',
};
const review = JSON.stringify({
  apiVersion: 'admission.k8s.io/v1',
  kind: 'AdmissionReview',
  request: { uid: 'b6b4c3e2-7d1f-4a57-9a53-3f7e1c2d9a10', operation: 'CREATE', namespace: 'team', kind: { group: '', version: 'v1', kind: 'Pod' }, object: { metadata: {}, spec: { containers: [] } } },
});

function post(path: string, client?: Issued): Promise<{ status: number; body: string }> {
  return new Promise((done, fail) => {
    const req = request(
      `${injector.baseUrl}${path}`,
      { method: path === '/mutate' ? 'POST' : 'GET', ca: injector.ca, cert: client?.cert, key: client?.key, headers: { 'content-type': 'application/json' } },
      (res) => {
        let body = '';
        res.on('data', (chunk: Buffer) => (body += chunk.toString()));
        res.on('end', () => done({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', fail);
    req.end(path === '/mutate' ? review : undefined);
  });
}

function optedInPod(): V1Pod {
  return { metadata: { generateName: 'mtls-', annotations: optedIn }, spec: { containers: [{ name: 'app', image: 'registry.example/app:1.0' }] } };
}

beforeAll(async () => {
  injector = await startInjector(undefined, { CLIENT_CA_FILE: cp.webhookClientCaFile });
  namespace = await createTestNamespace(kc, 'mtls', { [INJECTION_LABEL_KEY]: INJECTION_LABEL_VALUE });
  const configuration = buildMutatingWebhookConfiguration({
    name: webhookName,
    installNamespace: 'outrigger-system',
    client: { mode: 'url', port: Number(new URL(injector.baseUrl).port) },
    caBundle: encodeCaBundle(injector.ca),
    failurePolicy: 'Fail',
  });
  webhookProbe = { namespace, pod: optedInPod(), agent: 'xxl-agent' };
  await registerWebhook(admissionApi, core, configuration, webhookProbe);
});

afterAll(async () => {
  await unregisterWebhook(admissionApi, core, webhookName, webhookProbe);
  await injector?.process.stop();
});

describe('webhook mutual TLS (CLIENT_CA_FILE)', () => {
  it("admits the API server's calls: it presents the client certificate of its admission configuration", async () => {
    const created = await core.createNamespacedPod({ namespace, body: optedInPod() });
    const containers = (created.spec?.containers ?? []).map((c) => c.name);
    expect(containers).toEqual(['app', 'xxl-agent']);
  });

  it('refuses /mutate to a caller without a client certificate', async () => {
    const reply = await post('/mutate');
    expect(reply.status).toBe(403);
    expect(reply.body).toContain('a client certificate signed by the configured client CA is required');
  });

  it('refuses such a caller before reading its body: headers announcing 8 MiB get the 403 with no byte of it sent', async () => {
    const reply = await new Promise<{ status: number; body: string }>((done, fail) => {
      const req = request(`${injector.baseUrl}/mutate`, { method: 'POST', ca: injector.ca, headers: { 'content-type': 'application/json', 'content-length': String(8 * 1024 * 1024) } }, (res) => {
        let body = '';
        res.on('data', (chunk: Buffer) => (body += chunk.toString()));
        res.on('end', () => done({ status: res.statusCode ?? 0, body }));
      });
      req.on('error', fail);
      req.setTimeout(10_000, () => req.destroy(new Error('no answer within 10 s: the injector waited for the body')));
      req.flushHeaders();
    });
    expect(reply.status).toBe(403);
  });

  it('refuses /mutate to a caller whose certificate another CA signed', async () => {
    const otherCa = issueCertificate({ commonName: 'not-the-apiserver-ca', usage: 'ca', lifetimeMs: 3_600_000 });
    const impostor = issueCertificate({ commonName: 'kube-apiserver-webhook-client', usage: 'client', issuer: otherCa, lifetimeMs: 3_600_000 });
    const reply = await post('/mutate', impostor);
    expect(reply.status).toBe(403);
  });

  it('still answers kubelet probes, which carry no certificate', async () => {
    expect((await post('/healthz')).status).toBe(200);
    expect((await post('/readyz')).status).toBe(200);
  });
});
