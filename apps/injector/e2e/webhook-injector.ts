import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AdmissionregistrationV1Api, CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { buildMutatingWebhookConfiguration, encodeCaBundle } from '@outrigger/admission';
import { REFERENCE_PROFILE_FILE } from '@outrigger/agent-profiles';
import { freePort, startApp, type ManagedProcess } from '@outrigger/control-plane';
import { issueCertificate } from '@outrigger/pki';
import { registerWebhook, unregisterWebhook, type WebhookProbe } from './webhook-registration.js';

export interface WebhookInjector {
  readonly process: ManagedProcess;
  readonly url: string;
  readonly ca: string;
  /** Unregisters the webhook, waits until the API server no longer calls it, and stops the injector. */
  stop(): Promise<void>;
}

/**
 * The built injector on a free port, serving a certificate of a fresh CA, registered with the API
 * server as MutatingWebhookConfiguration `name` (failurePolicy Fail), profiles from the reference file;
 * returns once the API server calls it for `probe`.
 */
export async function startWebhookInjector(kc: KubeConfig, name: string, probe: WebhookProbe): Promise<WebhookInjector> {
  const dir = mkdtempSync(join(tmpdir(), 'injector-webhook-'));
  const ca = issueCertificate({ commonName: 'e2e-ca', usage: 'ca', lifetimeMs: 86_400_000 });
  const leaf = issueCertificate({ commonName: '127.0.0.1', usage: 'server', issuer: ca, lifetimeMs: 86_400_000, ipAddresses: ['127.0.0.1'] });
  writeFileSync(join(dir, 'tls.crt'), leaf.cert);
  writeFileSync(join(dir, 'tls.key'), leaf.key);
  const port = await freePort();
  const process = await startApp('injector', {
    env: { PORT: String(port), PROFILES_FILE: REFERENCE_PROFILE_FILE, TLS_CERT_FILE: join(dir, 'tls.crt'), TLS_KEY_FILE: join(dir, 'tls.key'), POD_NAMESPACE: 'outrigger-system' },
    readyUrl: `https://127.0.0.1:${port}/readyz`,
    ca: ca.cert,
    logFile: join(dir, 'injector.log'),
  });
  const configuration = buildMutatingWebhookConfiguration({ name, installNamespace: 'outrigger-system', client: { mode: 'url', port }, caBundle: encodeCaBundle(ca.cert), failurePolicy: 'Fail' });
  const admissionApi = kc.makeApiClient(AdmissionregistrationV1Api);
  const core = kc.makeApiClient(CoreV1Api);
  try {
    await registerWebhook(admissionApi, core, configuration, probe);
  } catch (error) {
    await unregisterWebhook(admissionApi, core, name, undefined);
    await process.stop();
    throw error;
  }
  return {
    process,
    url: `https://127.0.0.1:${port}`,
    ca: ca.cert,
    stop: async () => {
      await unregisterWebhook(admissionApi, core, name, probe);
      await process.stop();
    },
  };
}
