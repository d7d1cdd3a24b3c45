import { createHash, createPrivateKey, X509Certificate } from 'node:crypto';
import { isIP } from 'node:net';
import { splitPemBundle, verifiesAgainst } from '@outrigger/pki';

/** A parsed certificate with the facts the planner compares; `pem` is normalised (LF endings). */
export interface Cert {
  readonly pem: string;
  readonly x509: X509Certificate;
  readonly fingerprint: string;
  readonly subject: string;
  readonly notBefore: Date;
  readonly notAfter: Date;
}

/** A certificate with its private key. */
export interface KeyPair {
  readonly cert: Cert;
  readonly key: string;
}

/**
 * Parsing and signature checks dominate a run and see the same few certificates every minute, so
 * their results are memoised (they depend only on the PEM text). Bounded: cleared when full.
 */
class Memo<V> {
  private readonly entries = new Map<string, V>();
  constructor(private readonly limit: number) {}
  get(key: string, compute: () => V): V {
    if (this.entries.has(key)) return this.entries.get(key) as V;
    const value = compute();
    if (this.entries.size >= this.limit) this.entries.clear();
    this.entries.set(key, value);
    return value;
  }
}

const parsed = new Memo<Cert | undefined>(512);
const verdicts = new Memo<boolean>(2048);

/** The first certificate of `pem`, or undefined when there is none or it does not parse. */
export function parseCertificate(pem: string | undefined): Cert | undefined {
  const first = pem === undefined ? undefined : splitPemBundle(pem)[0];
  if (first === undefined) return undefined;
  return parsed.get(first.replace(/\r\n/g, '\n'), () => {
    try {
      const x509 = new X509Certificate(first);
      return {
        pem: x509.toString(),
        x509,
        fingerprint: x509.fingerprint256,
        subject: x509.subject.replace(/\n/g, ', '),
        notBefore: new Date(x509.validFrom),
        notAfter: new Date(x509.validTo),
      };
    } catch {
      return undefined;
    }
  });
}

/** Every certificate of a PEM bundle that parses; `unparseable` counts the others. */
export function parseBundle(bundle: string | undefined): { certs: Cert[]; unparseable: number } {
  const pems = bundle === undefined ? [] : splitPemBundle(bundle);
  const certs = pems.map(parseCertificate).filter((c): c is Cert => c !== undefined);
  return { certs, unparseable: pems.length - certs.length };
}

/** The bundle text: concatenated normalised PEMs. */
export function formatBundle(certs: readonly Cert[]): string {
  return certs.map((c) => c.pem).join('');
}

export function uniqueByFingerprint(certs: readonly Cert[]): Cert[] {
  const seen = new Map<string, Cert>();
  for (const cert of certs) if (!seen.has(cert.fingerprint)) seen.set(cert.fingerprint, cert);
  return [...seen.values()];
}

export function keyMatches(cert: Cert, keyPem: string | undefined): boolean {
  if (keyPem === undefined) return false;
  return verdicts.get(`key ${cert.fingerprint} ${createHash('sha256').update(keyPem).digest('hex')}`, () => {
    try {
      return cert.x509.checkPrivateKey(createPrivateKey(keyPem));
    } catch {
      return false;
    }
  });
}

export function isValidAt(cert: Cert, now: Date): boolean {
  return cert.notBefore.getTime() <= now.getTime() && now.getTime() < cert.notAfter.getTime();
}

export function lifeMs(cert: Cert): number {
  return cert.notAfter.getTime() - cert.notBefore.getTime();
}

/** The moment less than `fraction` of the certificate's life is left. */
export function renewalTime(cert: Cert, fraction: number): Date {
  return new Date(cert.notAfter.getTime() - lifeMs(cert) * fraction);
}

/** True when `ca` issued and signed `leaf` (validity times are checked separately). */
export function signedBy(leaf: Cert, ca: Cert): boolean {
  return verdicts.get(`sig ${leaf.fingerprint} ${ca.fingerprint}`, () => verifiesAgainst(leaf.pem, ca.pem));
}

/** True when the bundle holds a certificate with this fingerprint. */
export function bundleHas(bundle: readonly Cert[], cert: Cert): boolean {
  return bundle.some((c) => c.fingerprint === cert.fingerprint);
}

/** Fingerprints compare case- and separator-insensitively (`AB:CD…` from Node, `abcd…` from elsewhere). */
export function normalizeFingerprint(fingerprint: string): string {
  return fingerprint.replace(/[^0-9a-f]/gi, '').toUpperCase();
}

/** DNS and IP subject alternative names, sorted and canonical, for comparison with the config. */
export function subjectAltNames(cert: Cert): { dnsNames: string[]; ipAddresses: string[] } {
  const dnsNames: string[] = [];
  const ipAddresses: string[] = [];
  const text = cert.x509.subjectAltName ?? '';
  for (const match of text.matchAll(/(DNS|IP Address):("(?:[^"\\]|\\.)*"|[^,]*)/g)) {
    const raw = match[2].startsWith('"') ? (JSON.parse(match[2]) as string) : match[2];
    if (match[1] === 'DNS') dnsNames.push(raw.toLowerCase());
    else ipAddresses.push(canonicalIp(raw));
  }
  return { dnsNames: [...new Set(dnsNames)].sort(), ipAddresses: [...new Set(ipAddresses)].sort() };
}

/** One spelling per address: IPv6 compressed and lower-case (Node prints SAN IPv6 uncompressed). */
export function canonicalIp(ip: string): string {
  if (isIP(ip) !== 6) return ip;
  return new URL(`http://[${ip}]/`).hostname.slice(1, -1);
}

/** `CN=outrigger-webhook-ca@1790000000 (sha256 AB:CD:EF:01, until 2026-11-01T00:00:00.000Z)` for messages. */
export function describe(cert: Cert): string {
  return `${cert.subject} (sha256 ${cert.fingerprint.slice(0, 11)}, until ${cert.notAfter.toISOString()})`;
}

export function formatDuration(ms: number): string {
  const sign = ms < 0 ? '-' : '';
  let rest = Math.abs(Math.round(ms / 1000));
  const parts: string[] = [];
  for (const [unit, size] of [['d', 86_400], ['h', 3_600], ['m', 60], ['s', 1]] as const) {
    if (rest >= size || (unit === 's' && parts.length === 0)) {
      parts.push(`${Math.floor(rest / size)}${unit}`);
      rest %= size;
    }
  }
  return sign + parts.slice(0, 2).join('');
}
