import {
  type ParsedBundle,
  type ParsedCertificate,
  keyMatches,
  normalizeFingerprint,
  parseBundle,
  parseCertificate,
  parsePrivateKey,
} from '@outrigger/pki';
import { CA_SECRET_KEYS, SERVING_ANNOTATIONS, SERVING_SECRET_KEYS, type SecretState } from './secret-layout.js';

/** A certificate with its private key, as written to a Secret and handed to the issuer. */
export interface KeyPair {
  readonly cert: ParsedCertificate;
  /** PEM text, exactly as stored or issued. */
  readonly key: string;
}

/** Where an entry was read: the Secret (`namespace/name`) and its data key. */
export interface EntryRef {
  readonly secret: string;
  readonly dataKey: string;
}

export interface ReadEntry<T> extends EntryRef {
  readonly state: 'read';
  readonly value: T;
}

/** An entry with no usable value, and why; messages say `tls.crt is missing`, `ca.crt does not parse`. */
export interface UnreadEntry extends EntryRef {
  readonly state: 'missing' | 'unreadable';
  readonly why: 'is missing' | 'does not parse';
}

/** One data key of a Secret, read once at the edge: its value, or why there is none. */
export type SecretEntry<T> = ReadEntry<T> | UnreadEntry;

/** A certificate and the key stored beside it (`tls.crt`/`tls.key`, `ca.crt`/`ca.key`, …). */
export interface ObservedKeyPair {
  readonly cert: SecretEntry<ParsedCertificate>;
  /** The key's PEM text when it parses as a private key. */
  readonly key: SecretEntry<string>;
  /** Both read, and the key is the certificate's. */
  readonly matched?: KeyPair;
}

/** The CA Secret, read once (layout: secret-layout.ts). */
export interface ObservedCaSecret {
  /** Data and our annotations as stored: compared byte for byte with the desired Secret, never parsed again. */
  readonly stored: SecretState;
  /** `ca.crt` / `ca.key`: the signing CA. */
  readonly signer: ObservedKeyPair;
  /** `ca-next.crt` / `ca-next.key`: the staged CA; both entries missing when none is staged. */
  readonly next: ObservedKeyPair;
  /** `ca-bundle.crt`, the record of the published bundle; undefined when the key is absent. */
  readonly bundle?: ParsedBundle;
}

/** The serving Secret, read once. */
export interface ObservedServingSecret {
  readonly stored: SecretState;
  /** `tls.crt` / `tls.key`: the served leaf. */
  readonly leaf: ObservedKeyPair;
  /** `ca.crt`, the bundle the injectors trust; undefined when the key is absent. */
  readonly bundle?: ParsedBundle;
  /** Annotation `outrigger.dev/leaf-sha256`, normalised (see normalizeFingerprint); undefined when absent. */
  readonly recordedLeafSha256?: string;
  /** Annotation `outrigger.dev/leaf-since`; undefined when absent or not a time. */
  readonly recordedLeafSince?: Date;
}

/** Reads the CA Secret `secret` (`namespace/name`) once: every certificate and key parsed, with its facts. */
export function observeCaSecret(stored: SecretState, secret: string): ObservedCaSecret {
  const bundle = stored.data[CA_SECRET_KEYS.bundle];
  return {
    stored,
    signer: observeKeyPair(stored, secret, CA_SECRET_KEYS.cert, CA_SECRET_KEYS.key),
    next: observeKeyPair(stored, secret, CA_SECRET_KEYS.nextCert, CA_SECRET_KEYS.nextKey),
    ...(bundle === undefined ? {} : { bundle: parseBundle(bundle) }),
  };
}

/** Reads the serving Secret `secret` (`namespace/name`) once. */
export function observeServingSecret(stored: SecretState, secret: string): ObservedServingSecret {
  const bundle = stored.data[SERVING_SECRET_KEYS.bundle];
  const sha256 = stored.annotations?.[SERVING_ANNOTATIONS.leafSha256];
  const since = new Date(stored.annotations?.[SERVING_ANNOTATIONS.leafSince] ?? Number.NaN);
  return {
    stored,
    leaf: observeKeyPair(stored, secret, SERVING_SECRET_KEYS.cert, SERVING_SECRET_KEYS.key),
    ...(bundle === undefined ? {} : { bundle: parseBundle(bundle) }),
    ...(sha256 === undefined ? {} : { recordedLeafSha256: normalizeFingerprint(sha256) }),
    ...(Number.isNaN(since.getTime()) ? {} : { recordedLeafSince: since }),
  };
}

/** The value of an entry that was read; undefined when it is missing or unreadable. */
export function valueOf<T>(entry: SecretEntry<T>): T | undefined {
  return entry.state === 'read' ? entry.value : undefined;
}

/** `tls.crt is missing`, `ca.crt does not parse`. */
export function entryProblem(entry: UnreadEntry): string {
  return `${entry.dataKey} ${entry.why}`;
}

function observeKeyPair(stored: SecretState, secret: string, certKey: string, keyKey: string): ObservedKeyPair {
  const cert = readEntry(stored, secret, certKey, parseCertificate);
  const parsedKey = readEntry(stored, secret, keyKey, parsePrivateKey);
  const key: SecretEntry<string> = parsedKey.state === 'read' ? { ...parsedKey, value: parsedKey.value.pem } : parsedKey;
  const matched = cert.state === 'read' && parsedKey.state === 'read' && keyMatches(cert.value, parsedKey.value) ? { cert: cert.value, key: parsedKey.value.pem } : undefined;
  return matched ? { cert, key, matched } : { cert, key };
}

function readEntry<T>(stored: SecretState, secret: string, dataKey: string, parse: (text: string) => T | undefined): SecretEntry<T> {
  const text = stored.data[dataKey];
  if (text === undefined) return { secret, dataKey, state: 'missing', why: 'is missing' };
  const value = parse(text);
  return value === undefined ? { secret, dataKey, state: 'unreadable', why: 'does not parse' } : { secret, dataKey, state: 'read', value };
}
