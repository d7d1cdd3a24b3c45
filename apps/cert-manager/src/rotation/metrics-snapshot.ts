import { type Cert, parseBundle, parseCertificate } from './certificate-facts.js';
import { CA_SECRET_KEYS, SERVING_SECRET_KEYS, type SecretState } from './secret-layout.js';

export interface MetricsInput {
  readonly now: Date;
  readonly caSecret?: SecretState;
  readonly servingSecret?: SecretState;
}

/** Gauges for alerting; null when the certificate is missing or unreadable, negative once expired. */
export interface MetricsSnapshot {
  readonly caExpirySeconds: number | null;
  /** The staged CA, during a rotation. */
  readonly stagedCaExpirySeconds: number | null;
  readonly leafExpirySeconds: number | null;
  /** CAs in the published bundle: above one while a rotation is in progress (alert when it stays there). */
  readonly bundleCaCount: number;
}

export function metricsSnapshot(input: MetricsInput): MetricsSnapshot {
  const ca = input.caSecret?.data ?? {};
  return {
    caExpirySeconds: secondsLeft(parseCertificate(ca[CA_SECRET_KEYS.cert]), input.now),
    stagedCaExpirySeconds: secondsLeft(parseCertificate(ca[CA_SECRET_KEYS.nextCert]), input.now),
    leafExpirySeconds: secondsLeft(parseCertificate(input.servingSecret?.data[SERVING_SECRET_KEYS.cert]), input.now),
    bundleCaCount: parseBundle(ca[CA_SECRET_KEYS.bundle] ?? input.servingSecret?.data[SERVING_SECRET_KEYS.bundle]).certs.length,
  };
}

function secondsLeft(cert: Cert | undefined, now: Date): number | null {
  return cert ? Math.floor((cert.notAfter.getTime() - now.getTime()) / 1000) : null;
}
