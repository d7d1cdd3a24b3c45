import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { once } from 'node:events';
import { request } from 'node:https';
import { connect } from 'node:tls';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REFERENCE_PROFILE_FILE } from '@outrigger/agent-profiles';
import { freePort, repoRoot, startApp } from '@outrigger/control-plane';
import { issueCertificate } from '@outrigger/pki';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { DRAIN_MS } from '../src/admission/mutate.route.ts';

// What the README's "Rolling the injector" states: after SIGTERM the built injector keeps answering
// for DRAIN_MS, each answer with `Connection: close`, then exits, also while a client holds a
// connection it has not sent a request on (the API server's Go client dials them ahead of need).
const dir = mkdtempSync(join(tmpdir(), 'injector-shutdown-'));
const ca = issueCertificate({ commonName: 'ca', usage: 'ca', lifetimeMs: 3_600_000 });
const leaf = issueCertificate({ commonName: 'injector', usage: 'server', issuer: ca, dnsNames: ['localhost'], lifetimeMs: 3_600_000 });
writeFileSync(join(dir, 'tls.crt'), leaf.cert);
writeFileSync(join(dir, 'tls.key'), leaf.key);

/** The shipped Deployment's terminationGracePeriodSeconds, in ms. */
function terminationGraceMs(): number {
  const deployment = parse(readFileSync(join(repoRoot(), 'deploy/base/injector/deployment.yaml'), 'utf8')) as { spec: { template: { spec: { terminationGracePeriodSeconds: number } } } };
  return deployment.spec.template.spec.terminationGracePeriodSeconds * 1000;
}

function post(port: number): Promise<{ status: number | undefined; connection: string | undefined }> {
  return new Promise((done, fail) => {
    const req = request({ host: '127.0.0.1', port, path: '/mutate', method: 'POST', ca: ca.cert, servername: 'localhost', headers: { 'content-type': 'application/json' } }, (res) => {
      res.resume();
      res.on('end', () => done({ status: res.statusCode, connection: res.headers.connection }));
    });
    req.on('error', fail);
    req.end('{}');
  });
}

describe('injector shutdown', () => {
  it(`answers for ${DRAIN_MS} ms after SIGTERM with Connection: close, then exits`, { timeout: 90_000 }, async () => {
    const port = await freePort();
    const injector = await startApp('injector', {
      env: { PORT: String(port), PROFILES_FILE: REFERENCE_PROFILE_FILE, TLS_CERT_FILE: join(dir, 'tls.crt'), TLS_KEY_FILE: join(dir, 'tls.key') },
      readyUrl: `https://127.0.0.1:${port}/readyz`,
      ca: ca.cert,
      servername: 'localhost',
      logFile: join(dir, 'injector.log'),
    });
    const spare = connect({ host: '127.0.0.1', port, ca: ca.cert, servername: 'localhost' });
    await once(spare, 'secureConnect');
    const spareEnded = once(spare, 'end');
    const started = performance.now();
    process.kill(injector.pid, 'SIGTERM');
    await new Promise((r) => setTimeout(r, DRAIN_MS / 2));
    // An empty review is refused (400): what matters is that it is answered, and how.
    expect(await post(port)).toEqual({ status: 400, connection: 'close' });
    await injector.whenExited();
    await spareEnded;
    spare.destroy();
    const stoppedMs = performance.now() - started;
    expect(stoppedMs).toBeGreaterThanOrEqual(DRAIN_MS);
    // Before the kubelet's SIGKILL ends the pod.
    expect(stoppedMs).toBeLessThan(terminationGraceMs());
  });
});
