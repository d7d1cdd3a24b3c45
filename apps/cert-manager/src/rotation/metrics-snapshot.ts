import type { ParsedCertificate } from '@outrigger/pki';
import { type ObservedCaSecret, type ObservedServingSecret, valueOf } from './observed-secrets.js';

export interface MetricsInput {
  readonly now: Date;
  readonly caSecret?: ObservedCaSecret;
  readonly servingSecret?: ObservedServingSecret;
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
  const { caSecret, servingSecret, now } = input;
  return {
    caExpirySeconds: secondsLeft(caSecret && valueOf(caSecret.signer.cert), now),
    stagedCaExpirySeconds: secondsLeft(caSecret && valueOf(caSecret.next.cert), now),
    leafExpirySeconds: secondsLeft(servingSecret && valueOf(servingSecret.leaf.cert), now),
    bundleCaCount: (caSecret?.bundle ?? servingSecret?.bundle)?.certs.length ?? 0,
  };
}

function secondsLeft(cert: ParsedCertificate | undefined, now: Date): number | null {
  return cert ? Math.floor((cert.notAfter.getTime() - now.getTime()) / 1000) : null;
}
