import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { issueCertificate, type Issued } from '@outrigger/pki';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import type { InjectorConfig } from '../config/injector.config.js';
import { InjectorMetrics } from '../metrics/injector.metrics.js';
import { ServingCertificateSource, replacesServed } from './serving-certificate.source.js';
import { type ServingPair, checkServingPair } from './serving-pair.js';

const HOUR = 3_600_000;
const ca = issueCertificate({ commonName: 'serving-ca', usage: 'ca', lifetimeMs: 48 * HOUR });
const issue = (now = new Date()): Issued => issueCertificate({ commonName: 'injector', usage: 'server', issuer: ca, lifetimeMs: 24 * HOUR, now });
const pairOf = (issued: Issued, source = 'test'): ServingPair => checkServingPair({ ...issued, source, certFrom: 'cert', keyFrom: 'key' });

describe('replacesServed', () => {
  const older = pairOf(issue(new Date(Date.now() - HOUR)));
  const newer = pairOf(issue());

  it('serves the first pair, and any other pair when age does not matter', () => {
    expect(replacesServed(older, undefined, true)).toBe(true);
    expect(replacesServed(older, newer, false)).toBe(true);
  });

  it('never replaces the served pair by the same one, nor (files behind a watched Secret) by an older one', () => {
    expect(replacesServed(pairOf(older), older, false)).toBe(false);
    expect(replacesServed(older, newer, true)).toBe(false);
    expect(replacesServed(newer, older, true)).toBe(true);
  });
});

describe('ServingCertificateSource from files', () => {
  let source: ServingCertificateSource | undefined;
  let dir: string | undefined;
  afterEach(async () => {
    await source?.onModuleDestroy();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('serves the files, follows a rotation, refuses a broken one, reports the refusal until a good one comes, and counts both', async () => {
    dir = mkdtempSync(join(tmpdir(), 'serving-source-'));
    const at = (name: string) => join(dir ?? '', name);
    const replace = (name: string, text: string) => (writeFileSync(at(`.${name}.tmp`), text), renameSync(at(`.${name}.tmp`), at(name)));
    const first = issue();
    replace('tls.key', first.key);
    replace('tls.crt', first.cert);
    const registry = new Registry();
    const config = { tls: { certFile: at('tls.crt'), keyFile: at('tls.key') }, filePollMs: 20 } as unknown as InjectorConfig;
    source = new ServingCertificateSource(config, new InjectorMetrics(registry), undefined);
    source.onApplicationBootstrap();
    const reloads = async () => Object.fromEntries((await registry.getSingleMetric('outrigger_injector_certificate_reloads_total')?.get())?.values.map((v) => [v.labels.result, v.value]) ?? []);

    expect(source.current()?.cert).toBe(first.cert);
    expect(source.status()).toEqual({ source: `file ${at('tls.crt')}`, fingerprint256: pairOf(first).certificate.fingerprint256, notAfter: pairOf(first).certificate.notAfter, pem: first.cert });
    expect(await reloads()).toEqual({ success: 1 });

    const next = issue();
    replace('tls.key', next.key);
    replace('tls.crt', next.cert);
    for (let i = 0; i < 100 && source.current()?.cert !== next.cert; i++) await new Promise((r) => setTimeout(r, 20));
    expect(source.current()?.cert).toBe(next.cert);

    replace('tls.crt', 'not a certificate');
    for (let i = 0; i < 100 && (await reloads()).failure === undefined; i++) await new Promise((r) => setTimeout(r, 20));
    expect(await reloads()).toEqual({ success: 2, failure: 1 });
    expect(source.current()?.cert).toBe(next.cert);
    expect(source.status()).toMatchObject({ pem: next.cert, stale: `TLS_CERT_FILE=${at('tls.crt')}: not a PEM certificate` });

    const last = issue();
    replace('tls.key', last.key);
    replace('tls.crt', last.cert);
    for (let i = 0; i < 100 && source.current()?.cert !== last.cert; i++) await new Promise((r) => setTimeout(r, 20));
    expect(source.status()?.pem).toBe(last.cert);
    expect(source.status()?.stale).toBeUndefined();
  });
});
