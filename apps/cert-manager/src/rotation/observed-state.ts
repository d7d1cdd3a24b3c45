import { type ObservedCaSecret, type ObservedServingSecret, observeCaSecret, observeServingSecret } from './observed-secrets.js';
import { type StoredWebhookBundle, type WebhookBundle, observeWebhooks } from './observed-webhooks.js';
import type { SecretState } from './secret-layout.js';

/** What the cluster holds, as stored: decoded Secret data and caBundle text. */
export interface StoredState {
  /** Undefined when the Secret does not exist. */
  readonly caSecret?: SecretState;
  readonly servingSecret?: SecretState;
  readonly webhooks: readonly StoredWebhookBundle[];
}

/** The Secrets' `namespace/name`, for the entries that name where they were read. */
export interface SecretNames {
  readonly caSecret: string;
  readonly servingSecret: string;
}

/** What the cluster holds, read once: the only form the planner, readiness and metrics look at. */
export interface ObservedState {
  /** Undefined when the Secret does not exist. */
  readonly caSecret?: ObservedCaSecret;
  readonly servingSecret?: ObservedServingSecret;
  /** Every managed webhook; an empty list means none is managed (nothing to confirm). */
  readonly webhooks: readonly WebhookBundle[];
}

/** The edge: every certificate, key and bundle parsed here, once per observation. */
export function observeState(stored: StoredState, names: SecretNames): ObservedState {
  return {
    ...(stored.caSecret ? { caSecret: observeCaSecret(stored.caSecret, names.caSecret) } : {}),
    ...(stored.servingSecret ? { servingSecret: observeServingSecret(stored.servingSecret, names.servingSecret) } : {}),
    webhooks: observeWebhooks(stored.webhooks),
  };
}
