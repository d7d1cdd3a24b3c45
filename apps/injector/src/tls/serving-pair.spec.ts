import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { issueCertificate } from '@outrigger/pki';
import { beforeAll, describe, expect, it } from 'vitest';
import { checkServingPair, readPemFiles, validateServingPair } from './serving-pair.js';

// Real files in a temp dir, with real certificates: what an operator's mounted Secret holds.
const dir = mkdtempSync(join(tmpdir(), 'serving-certificate-'));
const file = (name: string, text: string) => (writeFileSync(join(dir, name), text), join(dir, name));

describe('the serving certificate files', () => {
  let cert: string;
  let key: string;
  let otherKey: string;

  beforeAll(() => {
    const ca = issueCertificate({ commonName: 'test-ca', usage: 'ca', lifetimeMs: 3_600_000 });
    const leaf = issueCertificate({ commonName: 'injector', usage: 'server', issuer: ca, dnsNames: ['injector'], lifetimeMs: 3_600_000 });
    cert = file('tls.crt', leaf.cert);
    key = file('tls.key', leaf.key);
    otherKey = file('other.key', ca.key);
  });

  it('a matching pair reads and checks', () => {
    const pair = readPemFiles(cert, key);
    expect(checkServingPair(pair).certificate.subject).toBe('CN=injector');
    expect(validateServingPair(pair)).toMatchObject({ cert: pair.cert, key: pair.key, source: `file ${cert}` });
  });

  it('names the variable and the file: a directory, a missing file', () => {
    mkdirSync(join(dir, 'certs'));
    expect(() => readPemFiles(join(dir, 'certs'), key)).toThrow(`TLS_CERT_FILE=${join(dir, 'certs')}: is a directory, not a PEM file`);
    expect(() => readPemFiles(cert, join(dir, 'nope.key'))).toThrow(`TLS_KEY_FILE=${join(dir, 'nope.key')}: no such file`);
  });

  it('names the variable and the file: not PEM, or not a matching pair', () => {
    const garbage = file('garbage.pem', 'hello\n');
    expect(() => checkServingPair(readPemFiles(garbage, key))).toThrow(`TLS_CERT_FILE=${garbage}: not a PEM certificate`);
    expect(() => checkServingPair(readPemFiles(cert, garbage))).toThrow(`TLS_KEY_FILE=${garbage}: not a PEM private key`);
    expect(() => checkServingPair(readPemFiles(key, cert))).toThrow(`TLS_CERT_FILE=${key}: not a PEM certificate`);
    expect(() => checkServingPair(readPemFiles(cert, otherKey))).toThrow(`TLS_KEY_FILE=${otherKey} does not match the certificate in TLS_CERT_FILE=${cert}`);
  });

  it('an expired certificate is refused for serving, naming where it came from', () => {
    const pair = readPemFiles(cert, key);
    expect(() => validateServingPair(pair, new Date(Date.now() + 2 * 3_600_000))).toThrow(new RegExp(`^TLS_CERT_FILE=${cert}: the certificate expired at `));
  });
});

describe('a pair from the watched Secret', () => {
  it('names the Secret and the data key', () => {
    const ca = issueCertificate({ commonName: 'test-ca', usage: 'ca', lifetimeMs: 3_600_000 });
    const leaf = issueCertificate({ commonName: 'injector', usage: 'server', issuer: ca, lifetimeMs: 3_600_000 });
    const source = 'Secret outrigger-system/outrigger-injector-tls';
    const fromSecret = (cert: string, key: string) => ({ cert, key, source, certFrom: `${source} tls.crt`, keyFrom: `${source} tls.key` });
    expect(validateServingPair(fromSecret(leaf.cert, leaf.key)).source).toBe(source);
    expect(() => validateServingPair(fromSecret('garbage', leaf.key))).toThrow(`${source} tls.crt: not a PEM certificate`);
    expect(() => validateServingPair(fromSecret(leaf.cert, ca.key))).toThrow(`${source} tls.key does not match the certificate in ${source} tls.crt`);
  });
});
