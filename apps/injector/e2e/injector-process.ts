import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REFERENCE_PROFILE_FILE } from '@outrigger/agent-profiles';
import { freePort, startApp, type ManagedProcess } from '@outrigger/control-plane';
import { issueCertificate, type Issued } from '@outrigger/pki';

export interface RunningInjector {
  readonly process: ManagedProcess;
  readonly baseUrl: string;
  readonly ca: string;
  readonly serving: Issued;
  readonly logFile: string;
}

/** A CA and a serving certificate for 127.0.0.1/localhost. */
export function servingPair(): { ca: Issued; serving: Issued } {
  const ca = issueCertificate({ commonName: 'fuzz-ca', usage: 'ca', lifetimeMs: 24 * 3600_000 });
  const serving = issueCertificate({ commonName: 'injector', usage: 'server', lifetimeMs: 3600_000, issuer: ca, dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'] });
  return { ca, serving };
}

/** Starts dist/apps/injector/main.js with the reference profile file on a free port (PROFILES_FILE: '' for the API). */
export async function startInjector(pair = servingPair(), extraEnv: Record<string, string> = {}): Promise<RunningInjector> {
  const dir = mkdtempSync(join(tmpdir(), 'injector-fuzz-'));
  const certFile = join(dir, 'tls.crt');
  const keyFile = join(dir, 'tls.key');
  writeFileSync(certFile, pair.serving.cert);
  writeFileSync(keyFile, pair.serving.key);
  const port = await freePort();
  const baseUrl = `https://127.0.0.1:${port}`;
  const logFile = join(dir, 'injector.log');
  const child = await startApp('injector', {
    env: { PORT: String(port), PROFILES_FILE: REFERENCE_PROFILE_FILE, TLS_CERT_FILE: certFile, TLS_KEY_FILE: keyFile, POD_NAMESPACE: 'outrigger-system', ...extraEnv },
    readyUrl: `${baseUrl}/healthz`,
    ca: pair.ca.cert,
    logFile,
  });
  return { process: child, baseUrl, ca: pair.ca.cert, serving: pair.serving, logFile };
}
