import { type Cert, bundleHas, parseBundle } from './certificate-facts.js';
import type { ObservedWebhook } from './rotation-plan.js';

/** A webhook's caBundle, parsed once per run. */
export interface WebhookBundle {
  readonly name: string;
  readonly certs: readonly Cert[];
  /** Blocks that look like certificates but do not parse. */
  readonly unparseable: number;
  readonly empty: boolean;
}

export function parseWebhookBundles(webhooks: readonly ObservedWebhook[]): WebhookBundle[] {
  return webhooks.map(({ name, caBundle }) => {
    const { certs, unparseable } = parseBundle(caBundle);
    return { name, certs, unparseable, empty: caBundle === undefined || caBundle.trim() === '' };
  });
}

/** Names of the webhooks whose caBundle does not (yet) contain `cert`; empty when all trust it. */
export function webhooksMissing(webhooks: readonly WebhookBundle[], cert: Cert): string[] {
  return webhooks.filter((w) => !bundleHas(w.certs, cert)).map((w) => w.name);
}

/** True when the webhook's caBundle holds exactly these certificates (order and spelling aside). */
export function holdsExactly(webhook: WebhookBundle, certs: readonly Cert[]): boolean {
  if (webhook.unparseable > 0) return false;
  const have = new Set(webhook.certs.map((c) => c.fingerprint));
  const want = new Set(certs.map((c) => c.fingerprint));
  return have.size === want.size && [...want].every((fp) => have.has(fp));
}
