import { lifetimeMs, signedBy, validAt } from '@outrigger/pki';
import type { ObservedServingSecret } from './observed-secrets.js';
import type { WebhookBundle } from './observed-webhooks.js';
import { describe } from './rotation-messages.js';

/** A sensible `minValidityMs`: far below the renewal margin of a 90-day leaf, far above the recheck period. */
export const DEFAULT_READY_MIN_VALIDITY_MS = 60 * 60_000;

export interface ReadinessInput {
  readonly now: Date;
  readonly servingSecret?: ObservedServingSecret;
  readonly webhooks: readonly WebhookBundle[];
  /**
   * The leaf must stay valid at least this much longer. By default the lesser of an hour and a tenth
   * of the leaf's own lifetime: judged by how the leaf was issued, not by this pod's lifetime
   * settings, so a standby whose settings differ from the leader's (mid-rollout) is still ready.
   */
  readonly minValidityMs?: number;
}

export interface Readiness {
  readonly ready: boolean;
  /** Why not ready; empty when ready. */
  readonly reasons: readonly string[];
}

/**
 * Ready when the serving Secret holds a leaf that matches its key, stays valid for at least
 * `minValidityMs`, and verifies against the caBundle of every managed webhook (through a CA that
 * is itself valid now).
 */
export function readiness(input: ReadinessInput): Readiness {
  const { now } = input;
  if (!input.servingSecret) return notReady('the serving Secret is missing');
  const observed = input.servingSecret.leaf;
  const crt = observed.cert.dataKey;
  if (observed.cert.state !== 'read') return notReady(`${crt} is missing or does not parse`);
  const leaf = observed.cert.value;
  if (leaf.isCa) return notReady(`${crt} holds a CA certificate`);

  const reasons: string[] = [];
  if (!observed.matched) reasons.push(`${observed.key.dataKey} is missing or does not match ${crt}`);
  if (now.getTime() < leaf.notBefore.getTime()) reasons.push(`the leaf is not valid before ${leaf.notBefore.toISOString()}`);
  const validUntil = now.getTime() + (input.minValidityMs ?? Math.min(DEFAULT_READY_MIN_VALIDITY_MS, lifetimeMs(leaf) / 10));
  if (leaf.notAfter.getTime() < validUntil) {
    reasons.push(`the leaf ${describe(leaf)} expires before ${new Date(validUntil).toISOString()}`);
  }
  for (const { name, certs } of input.webhooks) {
    if (certs.length === 0) reasons.push(`${name} has no caBundle`);
    else if (!certs.some((ca) => validAt(ca, now) && signedBy(leaf, ca))) reasons.push(`the leaf does not verify against the caBundle of ${name}`);
  }
  return { ready: reasons.length === 0, reasons };
}

function notReady(reason: string): Readiness {
  return { ready: false, reasons: [reason] };
}
