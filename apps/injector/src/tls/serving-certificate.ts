import { readFileSync } from 'node:fs';
import { createSecureContext, type SecureContextOptions } from 'node:tls';
import { X509Certificate } from 'node:crypto';

export interface ServingCertificate {
  readonly cert: string;
  readonly key: string;
  /** Where it came from, for logs: a file path or a Secret. */
  readonly source: string;
}

export function readServingCertificate(certFile: string, keyFile: string): ServingCertificate {
  return { cert: readFileSync(certFile, 'utf8'), key: readFileSync(keyFile, 'utf8'), source: `file ${certFile}` };
}

/** Throws with a readable reason unless the pair is usable: parseable, matching, not expired. */
export function validateServingCertificate(pair: ServingCertificate, now = new Date()): X509Certificate {
  const x509 = new X509Certificate(pair.cert);
  createSecureContext({ cert: pair.cert, key: pair.key }); // fails on a key that does not match
  if (new Date(x509.validTo) <= now) throw new Error(`certificate from ${pair.source} expired at ${x509.validTo}`);
  return x509;
}

export function secureContextOptions(pair: ServingCertificate, clientCa?: string): SecureContextOptions {
  return { cert: pair.cert, key: pair.key, ...(clientCa ? { ca: clientCa } : {}) };
}
