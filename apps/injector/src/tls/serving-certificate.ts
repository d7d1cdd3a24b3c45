import { readFileSync } from 'node:fs';
import { createSecureContext, type SecureContextOptions } from 'node:tls';
import { createPrivateKey, X509Certificate, type KeyObject } from 'node:crypto';

export interface ServingCertificate {
  readonly cert: string;
  readonly key: string;
  /** Where it came from, for logs: a file path or a Secret. */
  readonly source: string;
  /** Where the certificate and the key came from, as an operator would look for them (`TLS_CERT_FILE=/path`, `Secret ns/name tls.key`). */
  readonly certFrom?: string;
  readonly keyFrom?: string;
}

/** Reads the pair from TLS_CERT_FILE and TLS_KEY_FILE; every error names the variable and the file. */
export function readServingCertificate(certFile: string, keyFile: string): ServingCertificate {
  const certFrom = `TLS_CERT_FILE=${certFile}`;
  const keyFrom = `TLS_KEY_FILE=${keyFile}`;
  return { cert: readPemFile(certFrom, certFile), key: readPemFile(keyFrom, keyFile), source: `file ${certFile}`, certFrom, keyFrom };
}

/** Throws with a reason naming where each part came from unless the pair is PEM and matches. */
export function checkServingPair(pair: ServingCertificate): X509Certificate {
  const certFrom = pair.certFrom ?? `certificate from ${pair.source}`;
  const keyFrom = pair.keyFrom ?? `key from ${pair.source}`;
  const x509 = parsed(() => new X509Certificate(pair.cert), `${certFrom}: not a PEM certificate`);
  const key = parsed<KeyObject>(() => createPrivateKey(pair.key), `${keyFrom}: not a PEM private key`);
  if (!x509.checkPrivateKey(key)) throw new Error(`${keyFrom} does not match the certificate in ${certFrom}`);
  createSecureContext({ cert: pair.cert, key: pair.key }); // what the server will do with them
  return x509;
}

/** checkServingPair, and not expired: what a reload must pass before it is served. */
export function validateServingCertificate(pair: ServingCertificate, now = new Date()): X509Certificate {
  const x509 = checkServingPair(pair);
  if (new Date(x509.validTo) <= now) throw new Error(`${pair.certFrom ?? `certificate from ${pair.source}`}: the certificate expired at ${x509.validTo}`);
  return x509;
}

export function secureContextOptions(pair: ServingCertificate, clientCa?: string): SecureContextOptions {
  return { cert: pair.cert, key: pair.key, ...(clientCa ? { ca: clientCa } : {}) };
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

function parsed<T>(parse: () => T, message: string): T {
  try {
    return parse();
  } catch (error) {
    throw new Error(message, { cause: error });
  }
}
