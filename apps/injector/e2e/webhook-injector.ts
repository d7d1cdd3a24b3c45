import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AdmissionregistrationV1Api } from '@kubernetes/client-node';
import { buildMutatingWebhookConfiguration, encodeCaBundle } from '@outrigger/admission';
import { REFERENCE_PROFILE_FILE } from '@outrigger/agent-profiles';
import { freePort, startApp, type ManagedProcess } from '@outrigger/control-plane';
import { issueCertificate } from '@outrigger/pki';

export interface WebhookInjector {
  readonly process: ManagedProcess;
  readonly url: string;
  readonly ca: string;
}

/**
 * The built injector on a free port, serving a certificate of a fresh CA, registered with the API
 * server as MutatingWebhookConfiguration `name` (failurePolicy Fail), profiles from the reference file.
 */
export async function startWebhookInjector(admissionApi: AdmissionregistrationV1Api, name: string, options: Pick<Parameters<typeof buildMutatingWebhookConfiguration>[0], 'skipUnmarkedPods'> = {}): Promise<WebhookInjector> {
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
  const configuration = buildMutatingWebhookConfiguration({ name, installNamespace: 'outrigger-system', client: { mode: 'url', port }, caBundle: encodeCaBundle(ca.cert), failurePolicy: 'Fail', ...options });
  await admissionApi.createMutatingWebhookConfiguration({ body: structuredClone(configuration) as never });
  return { process, url: `https://127.0.0.1:${port}`, ca: ca.cert };
}
