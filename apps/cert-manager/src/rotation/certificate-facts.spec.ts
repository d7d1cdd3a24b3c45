import { issueCertificate } from '@outrigger/pki';
import { describe, expect, it } from 'vitest';
import {
  canonicalIp,
  formatBundle,
  formatDuration,
  keyMatches,
  normalizeFingerprint,
  parseBundle,
  parseCertificate,
  renewalTime,
  signedBy,
  subjectAltNames,
} from './certificate-facts.js';
import { HOUR, T0, defined } from './test-support.js';

const ca = issueCertificate({ commonName: 'facts-ca', usage: 'ca', lifetimeMs: 3 * HOUR, now: T0 });
const leaf = issueCertificate({
  commonName: 'svc',
  usage: 'server',
  issuer: ca,
  lifetimeMs: HOUR,
  dnsNames: ['svc', 'svc.ns'],
  ipAddresses: ['10.0.0.1', '0:0:0:0:0:0:0:1'],
  now: T0,
});

describe('certificate facts', () => {
  it('parses the first certificate and normalises line endings', () => {
    const cert = defined(parseCertificate(leaf.cert + ca.cert));
    expect(cert.subject).toBe('CN=svc');
    expect(cert.pem).not.toContain('\r');
    expect(parseCertificate(leaf.cert.replace(/\r\n/g, '\n'))?.fingerprint).toBe(cert.fingerprint);
    expect(parseCertificate('garbage')).toBeUndefined();
    expect(parseCertificate('-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----')).toBeUndefined();
    expect(parseCertificate(undefined)).toBeUndefined();
  });

  it('splits bundles, counting blocks that do not parse', () => {
    const broken = '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n';
    const { certs, unparseable } = parseBundle(ca.cert + broken + leaf.cert);
    expect(certs.map((c) => c.subject)).toEqual(['CN=facts-ca', 'CN=svc']);
    expect(unparseable).toBe(1);
    expect(parseBundle(formatBundle(certs)).certs).toHaveLength(2);
    expect(parseBundle(undefined)).toEqual({ certs: [], unparseable: 0 });
  });

  it('checks keys and signatures', () => {
    const cert = defined(parseCertificate(leaf.cert));
    const caCert = defined(parseCertificate(ca.cert));
    expect(keyMatches(cert, leaf.key)).toBe(true);
    expect(keyMatches(cert, ca.key)).toBe(false);
    expect(keyMatches(cert, 'not a key')).toBe(false);
    expect(keyMatches(cert, undefined)).toBe(false);
    expect(signedBy(cert, caCert)).toBe(true);
    expect(signedBy(caCert, cert)).toBe(false);
  });

  it('reads SANs canonically', () => {
    expect(subjectAltNames(defined(parseCertificate(leaf.cert)))).toEqual({ dnsNames: ['svc', 'svc.ns'], ipAddresses: ['10.0.0.1', '::1'] });
    expect(canonicalIp('2001:DB8:0:0:0:0:0:1')).toBe('2001:db8::1');
    expect(canonicalIp('10.0.0.1')).toBe('10.0.0.1');
  });

  it('places the renewal point a fraction of the life before expiry', () => {
    const cert = defined(parseCertificate(leaf.cert));
    const life = cert.notAfter.getTime() - cert.notBefore.getTime();
    expect(renewalTime(cert, 1 / 3).getTime()).toBe(cert.notAfter.getTime() - life / 3);
  });

  it('formats fingerprints and durations', () => {
    expect(normalizeFingerprint('ab:cd:01')).toBe('ABCD01');
    expect(formatDuration(90 * 60_000)).toBe('1h30m');
    expect(formatDuration(3 * 86_400_000 + 5 * 60_000)).toBe('3d5m');
    expect(formatDuration(0)).toBe('0s');
    expect(formatDuration(-61_000)).toBe('-1m1s');
  });
});
