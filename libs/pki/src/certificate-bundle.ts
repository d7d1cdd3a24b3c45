import { type ParsedCertificate, parseCertificate, signedBy } from './parsed-certificate.js';
import { splitPemBundle } from './pem-blocks.js';

/** A PEM bundle read once: the certificates that parse, and how many blocks did not. */
export interface ParsedBundle {
  readonly certs: readonly ParsedCertificate[];
  /** Blocks that look like certificates but do not parse. */
  readonly unparseable: number;
}

export function parseBundle(bundle: string): ParsedBundle {
  const pems = splitPemBundle(bundle);
  const certs = pems.map(parseCertificate).filter((c): c is ParsedCertificate => c !== undefined);
  return { certs, unparseable: pems.length - certs.length };
}

/** The bundle text: the certificates' PEMs, concatenated. */
export function formatBundle(certs: readonly ParsedCertificate[]): string {
  return certs.map((c) => c.pem).join('');
}

/** True when the bundle holds a certificate with this fingerprint. */
export function bundleHas(bundle: readonly ParsedCertificate[], cert: ParsedCertificate): boolean {
  return bundle.some((c) => c.fingerprint256 === cert.fingerprint256);
}

/** The first of each fingerprint, in order. */
export function uniqueByFingerprint(certs: readonly ParsedCertificate[]): ParsedCertificate[] {
  const seen = new Map<string, ParsedCertificate>();
  for (const cert of certs) if (!seen.has(cert.fingerprint256)) seen.set(cert.fingerprint256, cert);
  return [...seen.values()];
}

/** True when the leaf of `leafPem` was signed by one of the CAs in `bundle` (PEM in, for tests and tools). */
export function verifiesAgainst(leafPem: string, bundle: string): boolean {
  const leaf = parseCertificate(leafPem);
  return leaf !== undefined && parseBundle(bundle).certs.some((ca) => signedBy(leaf, ca));
}
