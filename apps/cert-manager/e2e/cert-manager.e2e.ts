import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  AdmissionregistrationV1Api,
  CoordinationV1Api,
  CoreV1Api,
  PatchStrategy,
  setHeaderOptions,
  type KubeConfig,
  type V1Secret,
} from '@kubernetes/client-node';
import { type ManagedProcess, createTestNamespace, freePort, kubeConfigFrom, startApp } from '@outrigger/control-plane';
import { holderVersionFrom, LEASE_HOLDER_VERSION_ANNOTATION } from '@outrigger/install/names';
import { issueCertificate } from '@outrigger/pki';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';

const decode = (b64: string | undefined) => Buffer.from(b64 ?? '', 'base64').toString('utf8');

async function poll<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (error) {
      last = error;
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
}

function opensslVerify(dir: string, caPem: string, leafPem: string): string {
  writeFileSync(join(dir, 'bundle.pem'), caPem);
  writeFileSync(join(dir, 'leaf.pem'), leafPem);
  return execFileSync('openssl', ['verify', '-CAfile', join(dir, 'bundle.pem'), join(dir, 'leaf.pem')], { encoding: 'utf8' }).trim();
}

describe('cert-manager against a real API server', () => {
  const cp = inject('controlPlane');
  const dir = mkdtempSync(join(tmpdir(), 'cert-manager-e2e-'));
  let kc: KubeConfig;
  let core: CoreV1Api;
  let admission: AdmissionregistrationV1Api;
  let ns: string;
  let configName: string;
  const apps: ManagedProcess[] = [];
  let envBase: Record<string, string>;

  const readSecret = (name: string): Promise<V1Secret | undefined> => core.readNamespacedSecret({ namespace: ns, name }).catch(() => undefined);
  const caBundleOf = async () => decode((await admission.readMutatingWebhookConfiguration({ name: configName })).webhooks?.[0]?.clientConfig?.caBundle);

  async function start(instance: string): Promise<{ app: ManagedProcess; port: number }> {
    const port = await freePort();
    const app = await startApp('cert-manager', {
      env: { ...envBase, PORT: String(port), POD_NAME: instance },
      readyUrl: `http://127.0.0.1:${port}/readyz`,
      logFile: join(dir, `${instance}.log`),
      timeoutMs: 60_000,
    });
    apps.push(app);
    return { app, port };
  }

  beforeAll(async () => {
    kc = kubeConfigFrom(cp.kubeconfigPath);
    core = kc.makeApiClient(CoreV1Api);
    admission = kc.makeApiClient(AdmissionregistrationV1Api);
    ns = await createTestNamespace(kc, 'cert-manager');
    configName = `outrigger-injector-${ns}`;
    envBase = {
      KUBECONFIG: cp.kubeconfigPath,
      POD_NAMESPACE: ns,
      REGISTER_WEBHOOK: 'true',
      WEBHOOK_CONFIGURATION_NAME: configName,
      WEBHOOK_URL_PORT: String(await freePort()),
      EXTRA_DNS_NAMES: 'localhost',
      EXTRA_IP_ADDRESSES: '127.0.0.1',
      LEASE_DURATION: '4s',
      LEASE_RENEW_DEADLINE: '3s',
      LEASE_RETRY_PERIOD: '500ms',
      RECHECK: '10s',
    };
    console.log(`cert-manager e2e: namespace ${ns}, logs in ${dir}`);
  });

  afterAll(async () => {
    await Promise.all(apps.map((a) => a.stop()));
    await admission.deleteMutatingWebhookConfiguration({ name: configName }).catch(() => undefined);
  });

  it('creates the CA and serving Secrets and registers the webhook with the right caBundle', async () => {
    await start('cm-a');
    const ca = await readSecret('outrigger-webhook-ca');
    const serving = await readSecret('outrigger-injector-tls');
    expect(ca?.type).toBe('Opaque');
    expect(serving?.type).toBe('kubernetes.io/tls');
    const bundle = decode(serving?.data?.['ca.crt']);
    expect(decode(ca?.data?.['ca-bundle.crt'])).toBe(bundle);
    expect(opensslVerify(dir, decode(ca?.data?.['ca.crt']), decode(serving?.data?.['tls.crt']))).toMatch(/: OK$/);
    expect(opensslVerify(dir, bundle, decode(serving?.data?.['tls.crt']))).toMatch(/: OK$/);
    const webhookBundle = await poll('the registered caBundle', async () => (await caBundleOf()) || undefined);
    expect(webhookBundle).toBe(bundle);
    const webhook = (await admission.readMutatingWebhookConfiguration({ name: configName })).webhooks?.[0];
    expect(webhook?.failurePolicy).toBe('Fail');
    expect(webhook?.clientConfig.url).toBe(`https://127.0.0.1:${envBase.WEBHOOK_URL_PORT}/mutate`);
  });

  it('repairs a caBundle reset by hand and records an Event', async () => {
    const good = decode((await readSecret('outrigger-injector-tls'))?.data?.['ca.crt']);
    const stranger = issueCertificate({ commonName: 'someone-else', usage: 'ca', lifetimeMs: 3_600_000 });
    await admission.patchMutatingWebhookConfiguration(
      { name: configName, body: [{ op: 'replace', path: '/webhooks/0/clientConfig/caBundle', value: Buffer.from(stranger.cert).toString('base64') }] },
      setHeaderOptions('Content-Type', PatchStrategy.JsonPatch),
    );
    const started = Date.now();
    await poll('the caBundle repaired', async () => ((await caBundleOf()) === good ? true : undefined));
    console.log(`caBundle drift repaired after ${Date.now() - started} ms`);
    const event = await poll('a WebhookDriftFixed Event', async () => {
      const events = await core.listNamespacedEvent({ namespace: 'default' });
      return events.items.find((e) => e.reason === 'WebhookDriftFixed' && e.involvedObject.name === configName);
    });
    expect(event.type).toBe('Warning');
  });

  it('recreates a deleted serving Secret with a leaf the published bundle verifies', async () => {
    const before = await readSecret('outrigger-injector-tls');
    await core.deleteNamespacedSecret({ namespace: ns, name: 'outrigger-injector-tls' });
    const after = await poll('the serving Secret recreated', async () => {
      const s = await readSecret('outrigger-injector-tls');
      return s && s.metadata?.uid !== before?.metadata?.uid ? s : undefined;
    });
    const bundle = await caBundleOf();
    expect(opensslVerify(dir, bundle, decode(after.data?.['tls.crt']))).toMatch(/: OK$/);
  });

  it('with two replicas, only the Lease holder writes; the other takes over when it stops', async () => {
    const second = await start('cm-b');
    const coordination = kc.makeApiClient(CoordinationV1Api);
    const holder = async () => (await coordination.readNamespacedLease({ namespace: ns, name: 'outrigger-cert-manager' })).spec?.holderIdentity;
    expect(await holder()).toBe('cm-a');
    // The holder stamps its version for `outrigger check`, believed only while it holds the Lease.
    const stamped = async () => {
      const lease = await coordination.readNamespacedLease({ namespace: ns, name: 'outrigger-cert-manager' });
      return { raw: lease.metadata?.annotations?.[LEASE_HOLDER_VERSION_ANNOTATION], version: holderVersionFrom(lease.metadata?.annotations, lease.spec?.holderIdentity) };
    };
    expect(await stamped()).toEqual({ raw: expect.stringMatching(/^cm-a \d+\.\d+\.\d+\+dev$/), version: expect.stringMatching(/^\d+\.\d+\.\d+\+dev$/) });
    const metricsB = await (await fetch(`http://127.0.0.1:${second.port}/metrics`)).text();
    expect(metricsB).toMatch(/^outrigger_cert_manager_leader(\{[^}]*\})? 0$/m);

    // A drift is repaired by cm-a alone.
    const resetAt = new Date();
    await admission.patchMutatingWebhookConfiguration(
      { name: configName, body: [{ op: 'replace', path: '/webhooks/0/clientConfig/caBundle', value: Buffer.from('garbage').toString('base64') }] },
      setHeaderOptions('Content-Type', PatchStrategy.JsonPatch),
    );
    const good = decode((await readSecret('outrigger-injector-tls'))?.data?.['ca.crt']);
    await poll('the caBundle repaired', async () => ((await caBundleOf()) === good ? true : undefined));
    const writers = await poll('the repair Event', async () => {
      const events = (await core.listNamespacedEvent({ namespace: 'default' })).items.filter(
        (e) => e.involvedObject.name === configName && e.reason === 'WebhookDriftFixed' && new Date(e.lastTimestamp ?? 0) >= new Date(resetAt.getTime() - 1_000),
      );
      return events.length > 0 ? new Set(events.map((e) => e.reportingInstance)) : undefined;
    });
    expect([...writers]).toEqual(['cm-a']);

    // cm-a stops (releasing the Lease); cm-b takes over and repairs the next drift.
    await apps[0]?.stop();
    await poll('cm-b holding the Lease', async () => ((await holder()) === 'cm-b' ? true : undefined));
    expect((await stamped()).raw).toMatch(/^cm-b \d+\.\d+\.\d+\+dev$/);
    await admission.patchMutatingWebhookConfiguration(
      { name: configName, body: [{ op: 'replace', path: '/webhooks/0/clientConfig/caBundle', value: Buffer.from('garbage').toString('base64') }] },
      setHeaderOptions('Content-Type', PatchStrategy.JsonPatch),
    );
    await poll('the caBundle repaired by cm-b', async () => ((await caBundleOf()) === good ? true : undefined));
  });
});
