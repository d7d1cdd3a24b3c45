import { createHash, createPrivateKey, type KeyObject, X509Certificate } from 'node:crypto';
import { isIP } from 'node:net';
import { Memo } from './memo.js';
import { splitPemBundle } from './pem-blocks.js';

/**
 * A certificate read once: the facts callers compare, so nobody parses its PEM again. Made only by
 * parseCertificate; Node's X509Certificate stays inside this library.
 */
export interface ParsedCertificate {
  /** The certificate alone, PEM with LF line endings as Node prints it: what Secrets and bundles are written from. */
  readonly pem: string;
  /** SHA-256 fingerprint as Node spells it (`AB:CD:…`); compare other spellings with normalizeFingerprint. */
  readonly fingerprint256: string;
  /** Serial number, upper-case hex. */
  readonly serial: string;
  /** Distinguished name on one line, attributes joined by ", " (`CN=svc, O=org`). */
  readonly subject: string;
  readonly issuer: string;
  readonly notBefore: Date;
  readonly notAfter: Date;
  /** basicConstraints cA. */
  readonly isCa: boolean;
  /** DNS subject alternative names, lower-case, sorted, without duplicates. */
  readonly dnsNames: readonly string[];
  /** IP subject alternative names in canonical spelling (see canonicalIp), sorted, without duplicates. */
  readonly ipAddresses: readonly string[];
}

/** A private key read once. Made only by parsePrivateKey. */
export interface ParsedPrivateKey {
  /** The PEM text exactly as given: what a Secret holds and a TLS context is made from. */
  readonly pem: string;
  /** `rsa`, `ec`, `ed25519`, … */
  readonly type: string;
}

const x509s = new WeakMap<ParsedCertificate, X509Certificate>();
const keyObjects = new WeakMap<ParsedPrivateKey, { readonly object: KeyObject; readonly id: string }>();
const certificates = new Memo<ParsedCertificate | undefined>(512);
const keys = new Memo<ParsedPrivateKey | undefined>(256);
const verdicts = new Memo<boolean>(2048);

/** The first certificate of PEM text (a chain's leaf), or undefined when there is none or it does not parse. */
export function parseCertificate(pem: string): ParsedCertificate | undefined {
  const first = splitPemBundle(pem)[0];
  if (first === undefined) return undefined;
  return certificates.get(first.replace(/\r\n/g, '\n'), () => {
    let x509: X509Certificate;
    try {
      x509 = new X509Certificate(first);
    } catch {
      return undefined;
    }
    const cert: ParsedCertificate = {
      pem: x509.toString(),
      fingerprint256: x509.fingerprint256,
      serial: x509.serialNumber,
      subject: oneLine(x509.subject),
      issuer: oneLine(x509.issuer),
      notBefore: new Date(x509.validFrom),
      notAfter: new Date(x509.validTo),
      isCa: x509.ca,
      ...subjectAltNames(x509.subjectAltName),
    };
    x509s.set(cert, x509);
    return cert;
  });
}

/** A PEM private key (PKCS#1, PKCS#8 or SEC1, unencrypted), or undefined when the text is none. */
export function parsePrivateKey(pem: string): ParsedPrivateKey | undefined {
  const id = createHash('sha256').update(pem).digest('hex');
  return keys.get(id, () => {
    let object: KeyObject;
    try {
      object = createPrivateKey(pem);
    } catch {
      return undefined;
    }
    const key: ParsedPrivateKey = { pem, type: object.asymmetricKeyType ?? 'unknown' };
    keyObjects.set(key, { object, id });
    return key;
  });
}

/** True when `key` is the private key of `cert`. */
export function keyMatches(cert: ParsedCertificate, key: ParsedPrivateKey): boolean {
  const x509 = x509Of(cert);
  const held = keyObjects.get(key);
  if (!held) throw new Error('keyMatches: the key was not made by parsePrivateKey');
  return verdicts.get(`key ${cert.fingerprint256} ${held.id}`, () => x509.checkPrivateKey(held.object));
}

/** True when `ca` issued `cert` and its signature verifies (validity times are checked separately, see validAt). */
export function signedBy(cert: ParsedCertificate, ca: ParsedCertificate): boolean {
  return verdicts.get(`sig ${cert.fingerprint256} ${ca.fingerprint256}`, () => {
    const leaf = x509Of(cert);
    const issuer = x509Of(ca);
    return leaf.checkIssued(issuer) && leaf.verify(issuer.publicKey);
  });
}

/** notBefore ≤ now < notAfter. */
export function validAt(cert: ParsedCertificate, now: Date): boolean {
  return cert.notBefore.getTime() <= now.getTime() && now.getTime() < cert.notAfter.getTime();
}

export function lifetimeMs(cert: ParsedCertificate): number {
  return cert.notAfter.getTime() - cert.notBefore.getTime();
}

/** The moment less than `fraction` of the certificate's lifetime is left. */
export function renewalTime(cert: ParsedCertificate, fraction: number): Date {
  return new Date(cert.notAfter.getTime() - lifetimeMs(cert) * fraction);
}

/** Fingerprints compare case- and separator-insensitively (`AB:CD…` from Node, `abcd…` from elsewhere). */
export function normalizeFingerprint(fingerprint: string): string {
  return fingerprint.replace(/[^0-9a-f]/gi, '').toUpperCase();
}

/** One spelling per address: IPv6 compressed and lower-case (Node prints SAN IPv6 uncompressed). */
export function canonicalIp(ip: string): string {
  if (isIP(ip) !== 6) return ip;
  return new URL(`http://[${ip}]/`).hostname.slice(1, -1);
}

function x509Of(cert: ParsedCertificate): X509Certificate {
  const x509 = x509s.get(cert);
  if (!x509) throw new Error('the certificate was not made by parseCertificate');
  return x509;
}

// Node reads an empty distinguished name as undefined.
function oneLine(name: string | undefined): string {
  return (name ?? '').replace(/\n/g, ', ');
}

function subjectAltNames(text: string | undefined): { dnsNames: string[]; ipAddresses: string[] } {
  const dnsNames: string[] = [];
  const ipAddresses: string[] = [];
  for (const match of (text ?? '').matchAll(/(DNS|IP Address):("(?:[^"\\]|\\.)*"|[^,]*)/g)) {
    const raw = match[2].startsWith('"') ? (JSON.parse(match[2]) as string) : match[2];
    if (match[1] === 'DNS') dnsNames.push(raw.toLowerCase());
    else ipAddresses.push(canonicalIp(raw));
  }
  return { dnsNames: [...new Set(dnsNames)].sort(), ipAddresses: [...new Set(ipAddresses)].sort() };
}
