import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { REFERENCE_PROFILE_FILE } from '@outrigger/agent-profiles';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, startApp } from '@outrigger/control-plane';
import { issueCertificate } from '@outrigger/pki';
import { describe, expect, it } from 'vitest';

// The built injector refuses to start on a bad certificate, logging or retired setting: exit status 1 and
// one line that names the variable and the file, not an OpenSSL stack.
const dir = mkdtempSync(join(tmpdir(), 'injector-startup-'));
const ca = issueCertificate({ commonName: 'ca', usage: 'ca', lifetimeMs: 3_600_000 });
const leaf = issueCertificate({ commonName: 'injector', usage: 'server', issuer: ca, dnsNames: ['localhost'], lifetimeMs: 3_600_000 });
const write = (name: string, text: string) => (writeFileSync(join(dir, name), text), join(dir, name));
const cert = write('tls.crt', leaf.cert);
const key = write('tls.key', leaf.key);
const caKey = write('ca.key', ca.key);
mkdirSync(join(dir, 'a-directory'));

async function startupError(name: string, env: Record<string, string>): Promise<string> {
  const port = await freePort();
  const logFile = join(dir, `${name}.log`);
  await expect(startApp('injector', { env: { PORT: String(port), PROFILES_FILE: REFERENCE_PROFILE_FILE, TLS_CERT_FILE: cert, TLS_KEY_FILE: key, ...env }, readyUrl: `https://127.0.0.1:${port}/readyz`, ca: ca.cert, logFile })).rejects.toThrow(
    /exited during startup/,
  );
  return readFileSync(logFile, 'utf8');
}

describe('injector startup errors', () => {
  it.each([
    ['directory', { TLS_CERT_FILE: join(dir, 'a-directory') }, `injector: cannot start: TLS_CERT_FILE=${join(dir, 'a-directory')}: is a directory, not a PEM file`],
    ['not-pem', { TLS_KEY_FILE: cert }, `injector: cannot start: TLS_KEY_FILE=${cert}: not a PEM private key`],
    ['mismatch', { TLS_KEY_FILE: caKey }, `injector: cannot start: TLS_KEY_FILE=${caKey} does not match the certificate in TLS_CERT_FILE=${cert}`],
    ['log-level', { LOG_LEVEL: 'verbose' }, 'injector: cannot start: invalid configuration:\n  LOG_LEVEL: "verbose" is not a log level: use one of error, warn, info, debug'],
    ['retired', { FILE_POLL_SECONDS: '10' }, 'injector: cannot start: invalid configuration:\n  FILE_POLL_SECONDS: retired; set FILE_POLL=10s instead (a duration with its unit)'],
  ])('%s', async (name, env, message) => {
    const log = await startupError(name, env);
    expect(log).toContain(message);
    expect(log).not.toMatch(/^\s+at /m); // no stack trace
  });
});
