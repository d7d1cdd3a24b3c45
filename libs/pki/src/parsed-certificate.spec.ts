import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { bundleHas, formatBundle, parseBundle, uniqueByFingerprint } from './certificate-bundle.js';
import { issueCertificate } from './certificate.js';
import {
  type ParsedCertificate,
  canonicalIp,
  keyMatches,
  lifetimeMs,
  normalizeFingerprint,
  parseCertificate,
  parsePrivateKey,
  renewalTime,
  signedBy,
  validAt,
} from './parsed-certificate.js';

const HOUR = 3_600_000;
const T0 = new Date('2027-03-01T00:00:00Z');
const ca = issueCertificate({ commonName: 'facts-ca', usage: 'ca', lifetimeMs: 3 * HOUR, now: T0 });
const leaf = issueCertificate({
  commonName: 'svc',
  usage: 'server',
  issuer: ca,
  lifetimeMs: HOUR,
  dnsNames: ['svc', 'svc.ns', 'SVC'],
  ipAddresses: ['10.0.0.1', '0:0:0:0:0:0:0:1'],
  now: T0,
});

function defined<T>(value: T | undefined): T {
  if (value === undefined) throw new Error('expected a value');
  return value;
}

function parsed(pem: string): ParsedCertificate {
  return defined(parseCertificate(pem));
}

describe('parseCertificate', () => {
  it('reads a certificate with an empty subject, as Jetstack cert-manager issues by default', () => {
    const cert = parsed(readFileSync(new URL('../fixtures/empty-subject.crt', import.meta.url), 'utf8'));
    expect(cert.subject).toBe('');
    expect(cert.issuer).toBe('');
    expect(cert.dnsNames).toEqual(['outrigger-injector.outrigger-system.svc']);
  });

  it('reads the first certificate once, with its facts, and normalises line endings', () => {
    const cert = parsed(leaf.cert + ca.cert);
    expect(cert.subject).toBe('CN=svc');
    expect(cert.issuer).toBe('CN=facts-ca');
    expect(cert.isCa).toBe(false);
    expect(parsed(ca.cert).isCa).toBe(true);
    expect(cert.notAfter).toEqual(new Date(T0.getTime() + HOUR));
    expect(cert.pem).not.toContain('\r');
    expect(cert.fingerprint256).toMatch(/^([0-9A-F]{2}:){31}[0-9A-F]{2}$/);
    expect(parseCertificate(leaf.cert.replace(/\n/g, '\r\n'))?.fingerprint256).toBe(cert.fingerprint256);
    expect(parseCertificate(cert.pem)).toBe(cert);
  });

  it('is undefined for text without a certificate, or one that does not parse', () => {
    expect(parseCertificate('garbage')).toBeUndefined();
    expect(parseCertificate('')).toBeUndefined();
    expect(parseCertificate(leaf.key)).toBeUndefined();
    expect(parseCertificate('-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----')).toBeUndefined();
  });

  it('reads SANs canonically: DNS lower-case, IPv6 compressed, sorted, once each', () => {
    const cert = parsed(leaf.cert);
    expect(cert.dnsNames).toEqual(['svc', 'svc.ns']);
    expect(cert.ipAddresses).toEqual(['10.0.0.1', '::1']);
    expect(parsed(ca.cert).dnsNames).toEqual([]);
    expect(canonicalIp('2001:DB8:0:0:0:0:0:1')).toBe('2001:db8::1');
    expect(canonicalIp('10.0.0.1')).toBe('10.0.0.1');
  });
});

describe('keys and signatures', () => {
  it('matches a certificate with its own key only', () => {
    const cert = parsed(leaf.cert);
    expect(keyMatches(cert, defined(parsePrivateKey(leaf.key)))).toBe(true);
    expect(keyMatches(cert, defined(parsePrivateKey(ca.key)))).toBe(false);
    expect(parsePrivateKey('not a key')).toBeUndefined();
    expect(parsePrivateKey(leaf.cert)).toBeUndefined();
    expect(parsePrivateKey(leaf.key)).toMatchObject({ pem: leaf.key, type: 'rsa' });
  });

  it('checks who signed a certificate', () => {
    const cert = parsed(leaf.cert);
    const caCert = parsed(ca.cert);
    expect(signedBy(cert, caCert)).toBe(true);
    expect(signedBy(caCert, cert)).toBe(false);
    expect(signedBy(caCert, caCert)).toBe(true);
  });
});

describe('validity', () => {
  it('is valid from notBefore up to, not including, notAfter', () => {
    const cert = parsed(leaf.cert);
    expect(validAt(cert, cert.notBefore)).toBe(true);
    expect(validAt(cert, new Date(cert.notBefore.getTime() - 1))).toBe(false);
    expect(validAt(cert, cert.notAfter)).toBe(false);
  });

  it('places the renewal point a fraction of the lifetime before expiry', () => {
    const cert = parsed(leaf.cert);
    expect(lifetimeMs(cert)).toBe(cert.notAfter.getTime() - cert.notBefore.getTime());
    expect(renewalTime(cert, 1 / 3).getTime()).toBe(cert.notAfter.getTime() - lifetimeMs(cert) / 3);
  });

  it('compares fingerprints whatever their spelling', () => {
    expect(normalizeFingerprint('ab:cd:01')).toBe('ABCD01');
  });
});

describe('bundles', () => {
  it('splits bundles, counting blocks that do not parse', () => {
    const broken = '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n';
    const { certs, unparseable } = parseBundle(ca.cert + broken + leaf.cert);
    expect(certs.map((c) => c.subject)).toEqual(['CN=facts-ca', 'CN=svc']);
    expect(unparseable).toBe(1);
    expect(parseBundle(formatBundle(certs)).certs).toEqual(certs);
    expect(parseBundle('')).toEqual({ certs: [], unparseable: 0 });
  });

  it('compares and dedupes by fingerprint', () => {
    const [caCert, leafCert] = [parsed(ca.cert), parsed(leaf.cert)];
    expect(bundleHas([caCert], parsed(ca.cert.replace(/\n/g, '\r\n')))).toBe(true);
    expect(bundleHas([caCert], leafCert)).toBe(false);
    expect(uniqueByFingerprint([caCert, leafCert, caCert])).toEqual([caCert, leafCert]);
  });
});
