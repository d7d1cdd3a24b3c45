import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { BACKDATE_MS, issueCertificate } from './certificate.js';
import { verifiesAgainst } from './certificate-bundle.js';
import { splitPemBundle } from './pem-blocks.js';
import { type ParsedCertificate, parseCertificate } from './parsed-certificate.js';

const DAY = 86_400_000;
const parsed = (pem: string): ParsedCertificate => {
  const cert = parseCertificate(pem);
  if (!cert) throw new Error('expected the certificate to parse');
  return cert;
};
const now = new Date('2026-11-01T00:00:00Z');
const ca = issueCertificate({ commonName: 'outrigger-ca', usage: 'ca', lifetimeMs: 365 * DAY, now });
const leaf = issueCertificate({
  commonName: 'injector.outrigger-system.svc',
  usage: 'server',
  issuer: ca,
  lifetimeMs: 90 * DAY,
  dnsNames: ['injector', 'injector.outrigger-system', 'injector.outrigger-system.svc'],
  ipAddresses: ['127.0.0.1'],
  now,
});

function openssl(...args: string[]): string {
  return execFileSync('openssl', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

describe('issueCertificate', () => {
  it('makes a CA and a leaf that openssl verifies', () => {
    const dir = mkdtempSync(join(tmpdir(), 'pki-'));
    writeFileSync(join(dir, 'ca.crt'), ca.cert);
    writeFileSync(join(dir, 'tls.crt'), leaf.cert);
    const at = String(Math.floor(now.getTime() / 1000) + 60);
    expect(openssl('verify', '-attime', at, '-purpose', 'sslserver', '-CAfile', join(dir, 'ca.crt'), join(dir, 'tls.crt'))).toContain('OK');
    const text = openssl('x509', '-in', join(dir, 'tls.crt'), '-noout', '-text');
    expect(text).toMatch(/CA:FALSE/);
    expect(text).toMatch(/TLS Web Server Authentication/);
    expect(text).toMatch(/DNS:injector\.outrigger-system\.svc/);
    expect(text).toMatch(/IP Address:127\.0\.0\.1/);
    expect(openssl('x509', '-in', join(dir, 'ca.crt'), '-noout', '-text')).toMatch(/CA:TRUE/);
  });

  it('back-dates notBefore and never outlives the issuer', () => {
    const info = parsed(leaf.cert);
    expect(info.notBefore.getTime()).toBeLessThanOrEqual(now.getTime() - BACKDATE_MS + 1000);
    const long = issueCertificate({ commonName: 'x', usage: 'server', issuer: ca, lifetimeMs: 1000 * DAY, now });
    expect(parsed(long.cert).notAfter.getTime()).toBe(parsed(ca.cert).notAfter.getTime());
  });

  it('uses random positive serials', () => {
    const serials = new Set([ca, leaf].map((c) => parsed(c.cert).serial));
    expect(serials.size).toBe(2);
    for (const s of serials) expect(parseInt(s.slice(0, 2), 16)).toBeLessThan(0x80);
  });

  it('pairs the key with the certificate', () => {
    const x = new X509Certificate(leaf.cert);
    expect(x.checkPrivateKey(createPrivateKey(leaf.key))).toBe(true);
  });

  it('refuses a leaf without an issuer', () => {
    expect(() => issueCertificate({ commonName: 'x', usage: 'server', lifetimeMs: DAY })).toThrow(/needs an issuer/);
  });
});

describe('bundles', () => {
  it('verifies a leaf against any CA of a bundle and rejects a foreign one', () => {
    const other = issueCertificate({ commonName: 'other-ca', usage: 'ca', lifetimeMs: DAY, now });
    expect(splitPemBundle(other.cert + ca.cert)).toHaveLength(2);
    expect(verifiesAgainst(leaf.cert, other.cert + ca.cert)).toBe(true);
    expect(verifiesAgainst(leaf.cert, other.cert)).toBe(false);
  });
});

