import type { ParsedCertificate } from '@outrigger/pki';
import { type ObservedCaSecret, type ObservedServingSecret, valueOf } from './observed-secrets.js';

export interface MetricsInput {
  readonly caSecret?: ObservedCaSecret;
  readonly servingSecret?: ObservedServingSecret;
}

/**
 * Gauges for alerting. Expiries are notAfter in Unix seconds (a timestamp stays right when the loop
 * stalls, a countdown would freeze); null when the certificate is missing or unreadable.
 */
export interface MetricsSnapshot {
  readonly caExpiry: number | null;
  /** The staged CA, during a rotation only. */
  readonly stagedCaExpiry: number | null;
  readonly leafExpiry: number | null;
  /** CAs in the published bundle: above one while a rotation is in progress (alert when it stays there). */
  readonly bundleCaCount: number;
}

export function metricsSnapshot(input: MetricsInput): MetricsSnapshot {
  const { caSecret, servingSecret } = input;
  return {
    caExpiry: notAfter(caSecret && valueOf(caSecret.signer.cert)),
    stagedCaExpiry: notAfter(caSecret && valueOf(caSecret.next.cert)),
    leafExpiry: notAfter(servingSecret && valueOf(servingSecret.leaf.cert)),
    bundleCaCount: (caSecret?.bundle ?? servingSecret?.bundle)?.certs.length ?? 0,
  };
}

function notAfter(cert: ParsedCertificate | undefined): number | null {
  return cert ? Math.floor(cert.notAfter.getTime() / 1000) : null;
}
