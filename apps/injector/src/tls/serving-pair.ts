import { readFileSync } from 'node:fs';
import { createSecureContext, type SecureContextOptions } from 'node:tls';
import { keyMatches, type ParsedCertificate, parseCertificate, parsePrivateKey } from '@outrigger/pki';

/** A certificate and key as read (PEM text), before anything looked inside them. */
export interface PemPair {
  /** PEM text; for a ServingPair, what the server's secure context is made from. */
  readonly cert: string;
  readonly key: string;
  /** Where it came from, for logs: a file path or a Secret. */
  readonly source: string;
  /** Where the certificate and the key came from, as an operator would look for them (`TLS_CERT_FILE=/path`, `Secret ns/name tls.key`). */
  readonly certFrom: string;
  readonly keyFrom: string;
}

/** A pair read once: it parses, the key is the certificate's, and TLS accepts it. What a certificate source serves. */
export interface ServingPair extends Pick<PemPair, 'cert' | 'key' | 'source'> {
  readonly certificate: ParsedCertificate;
}

/** Reads the pair from TLS_CERT_FILE and TLS_KEY_FILE; every error names the variable and the file. */
export function readPemFiles(certFile: string, keyFile: string): PemPair {
  const certFrom = `TLS_CERT_FILE=${certFile}`;
  const keyFrom = `TLS_KEY_FILE=${keyFile}`;
  return { cert: readPemFile(certFrom, certFile), key: readPemFile(keyFrom, keyFile), source: `file ${certFile}`, certFrom, keyFrom };
}

/** Reads the pair once; throws with a reason naming where each part came from unless it is PEM and matches. */
export function checkServingPair(pair: PemPair): ServingPair {
  const certificate = parseCertificate(pair.cert);
  if (!certificate) throw new Error(`${pair.certFrom}: not a PEM certificate`);
  const key = parsePrivateKey(pair.key);
  if (!key) throw new Error(`${pair.keyFrom}: not a PEM private key`);
  if (!keyMatches(certificate, key)) throw new Error(`${pair.keyFrom} does not match the certificate in ${pair.certFrom}`);
  createSecureContext({ cert: pair.cert, key: pair.key }); // what the server will do with them
  return { certificate, cert: pair.cert, key: pair.key, source: pair.source };
}

/** checkServingPair, and not expired: what a reload must pass before it is served. */
export function validateServingPair(pair: PemPair, now = new Date()): ServingPair {
  const serving = checkServingPair(pair);
  const { notAfter } = serving.certificate;
  if (notAfter <= now) throw new Error(`${pair.certFrom}: the certificate expired at ${notAfter.toISOString()}`);
  return serving;
}

/** The options of the server's secure context for `pair`, with the client CA when callers must present a certificate. */
export function secureContextOptions(pair: ServingPair, clientCa?: string): SecureContextOptions {
  return { cert: pair.cert, key: pair.key, ...(clientCa ? { ca: clientCa } : {}) };
}

/** Same certificate and key text: nothing to reload. */
export function samePair(a: ServingPair | undefined, b: ServingPair | undefined): boolean {
  return a !== undefined && b !== undefined && a.cert === b.cert && a.key === b.key;
}

function readPemFile(from: string, path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why = code === 'EISDIR' ? 'is a directory, not a PEM file' : code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'not readable (permission denied)' : (error as Error).message;
    throw new Error(`${from}: ${why}`, { cause: error });
  }
}
