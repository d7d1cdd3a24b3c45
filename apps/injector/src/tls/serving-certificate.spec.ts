import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { issueCertificate } from '@outrigger/pki';
import { beforeAll, describe, expect, it } from 'vitest';
import { checkServingPair, readServingCertificate, validateServingCertificate } from './serving-certificate.js';

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
    const pair = readServingCertificate(cert, key);
    expect(checkServingPair(pair).subject).toContain('CN=injector');
    expect(validateServingCertificate(pair).subject).toContain('CN=injector');
  });

  it('names the variable and the file: a directory, a missing file', () => {
    mkdirSync(join(dir, 'certs'));
    expect(() => readServingCertificate(join(dir, 'certs'), key)).toThrow(`TLS_CERT_FILE=${join(dir, 'certs')}: is a directory, not a PEM file`);
    expect(() => readServingCertificate(cert, join(dir, 'nope.key'))).toThrow(`TLS_KEY_FILE=${join(dir, 'nope.key')}: no such file`);
  });

  it('names the variable and the file: not PEM, or not a matching pair', () => {
    const garbage = file('garbage.pem', 'hello\n');
    expect(() => checkServingPair(readServingCertificate(garbage, key))).toThrow(`TLS_CERT_FILE=${garbage}: not a PEM certificate`);
    expect(() => checkServingPair(readServingCertificate(cert, garbage))).toThrow(`TLS_KEY_FILE=${garbage}: not a PEM private key`);
    expect(() => checkServingPair(readServingCertificate(key, cert))).toThrow(`TLS_CERT_FILE=${key}: not a PEM certificate`);
    expect(() => checkServingPair(readServingCertificate(cert, otherKey))).toThrow(`TLS_KEY_FILE=${otherKey} does not match the certificate in TLS_CERT_FILE=${cert}`);
  });

  it('an expired certificate is refused for serving, naming where it came from', () => {
    const pair = readServingCertificate(cert, key);
    expect(() => validateServingCertificate(pair, new Date(Date.now() + 2 * 3_600_000))).toThrow(new RegExp(`^TLS_CERT_FILE=${cert}: the certificate expired at `));
  });
});
