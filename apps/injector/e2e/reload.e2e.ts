import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { get } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'node:tls';
import { fileURLToPath } from 'node:url';
import { REFERENCE_PROFILE_FILE } from '@outrigger/agent-profiles';
import { freePort, startApp, type ManagedProcess } from '@outrigger/control-plane';
import { issueCertificate, type Issued } from '@outrigger/pki';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from './eventually.js';

// Runs the built injector with files it must pick up without a restart (as ConfigMap and Secret
// volumes change under a running pod).
const dir = mkdtempSync(join(tmpdir(), 'injector-reload-'));
const ca = issueCertificate({ commonName: 'reload-ca', usage: 'ca', lifetimeMs: 86_400_000 });
const leaf = () => issueCertificate({ commonName: '127.0.0.1', usage: 'server', issuer: ca, lifetimeMs: 86_400_000, ipAddresses: ['127.0.0.1'] });
const tracingProfile = fileURLToPath(new URL('../../../libs/admission/fixtures/profiles/tracing.yaml', import.meta.url));
let port: number;
let injector: ManagedProcess;

/** Replaces a file the way kubelet does: a new file renamed over the old one. */
function replace(name: string, content: string): void {
  writeFileSync(join(dir, `.${name}.tmp`), content);
  renameSync(join(dir, `.${name}.tmp`), join(dir, name));
}

function writePair(pair: Issued): void {
  replace('tls.key', pair.key);
  replace('tls.crt', pair.cert);
}

function servedSerial(): Promise<string> {
  return new Promise((done, fail) => {
    const socket = connect({ host: '127.0.0.1', port, ca: ca.cert }, () => {
      done(socket.getPeerCertificate().serialNumber);
      socket.end();
    });
    socket.on('error', fail);
  });
}

function fetchText(path: string): Promise<string> {
  return new Promise((done, fail) => {
    get({ host: '127.0.0.1', port, path, ca: ca.cert }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => done(body));
    }).on('error', fail);
  });
}

const serialOf = (pem: string) => new X509Certificate(pem).serialNumber;

beforeAll(async () => {
  writePair(leaf());
  replace('profiles.yaml', readFileSync(REFERENCE_PROFILE_FILE, 'utf8'));
  port = await freePort();
  injector = await startApp('injector', {
    env: {
      PORT: String(port),
      TLS_CERT_FILE: join(dir, 'tls.crt'),
      TLS_KEY_FILE: join(dir, 'tls.key'),
      PROFILES_FILE: join(dir, 'profiles.yaml'),
      FILE_POLL: '1s',
    },
    readyUrl: `https://127.0.0.1:${port}/readyz`,
    ca: ca.cert,
    logFile: join(mkdtempSync(join(tmpdir(), 'injector-reload-log-')), 'injector.log'),
  });
});

afterAll(() => injector?.stop());

describe('hot reload', () => {
  it('serves a rotated certificate without a restart, and refuses a broken one', async () => {
    const next = leaf();
    writePair(next);
    await eventually('the new certificate to be served', servedSerial, (s) => s === serialOf(next.cert));

    replace('tls.crt', 'not a certificate');
    await eventually('the refusal to be counted', () => fetchText('/metrics'), (m) => /certificate_reloads_total\{result="failure"/.test(m));
    expect(await servedSerial()).toBe(serialOf(next.cert));
    expect(injector.running).toBe(true);
  });

  it('reloads agent profiles, and keeps the last good ones when the file turns bad', async () => {
    // Two profiles: the reference one (its one copy) and the tracing fixture, in one file.
    replace('profiles.yaml', [readFileSync(REFERENCE_PROFILE_FILE, 'utf8'), readFileSync(tracingProfile, 'utf8')].join('\n---\n'));
    const names = (body: string) => JSON.stringify(JSON.parse(body).details.profiles.names);
    await eventually('two profiles to be loaded', () => fetchText('/readyz'), (b) => names(b).includes('","'));
    const loaded = names(await fetchText('/readyz'));

    replace('profiles.yaml', 'apiVersion: outrigger.dev/v1alpha1\nkind: AgentProfile\nmetadata: { name: Not A Valid Name }\nspec: {}\n');
    await eventually('the bad file to be refused', () => fetchText('/metrics'), (m) => /profile_reloads_total\{result="failure"/.test(m));
    expect(names(await fetchText('/readyz'))).toBe(loaded);
  });
});
