import { type ParsedCertificate, bundleHas, parseBundle } from '@outrigger/pki';

/** One `clientConfig.caBundle` of a managed MutatingWebhookConfiguration, as read from the API server. */
export interface StoredWebhookBundle {
  /** Stable id chosen by the shell, e.g. `<configuration>/<webhook>`; echoed in patches. */
  readonly name: string;
  /** Decoded PEM text; undefined or empty when unset. */
  readonly caBundle?: string;
}

/** A webhook's caBundle, read once. */
export interface WebhookBundle {
  readonly name: string;
  readonly certs: readonly ParsedCertificate[];
  /** Blocks that look like certificates but do not parse. */
  readonly unparseable: number;
  /** Unset or blank. */
  readonly empty: boolean;
}

export function observeWebhooks(webhooks: readonly StoredWebhookBundle[]): WebhookBundle[] {
  return webhooks.map(({ name, caBundle }) => {
    const { certs, unparseable } = parseBundle(caBundle ?? '');
    return { name, certs, unparseable, empty: caBundle === undefined || caBundle.trim() === '' };
  });
}

/** Names of the webhooks whose caBundle does not (yet) contain `cert`; empty when all trust it. */
export function webhooksMissing(webhooks: readonly WebhookBundle[], cert: ParsedCertificate): string[] {
  return webhooks.filter((w) => !bundleHas(w.certs, cert)).map((w) => w.name);
}

/** True when the webhook's caBundle holds exactly these certificates (order and spelling aside). */
export function holdsExactly(webhook: WebhookBundle, certs: readonly ParsedCertificate[]): boolean {
  if (webhook.unparseable > 0) return false;
  const have = new Set(webhook.certs.map((c) => c.fingerprint256));
  const want = new Set(certs.map((c) => c.fingerprint256));
  return have.size === want.size && [...want].every((fp) => have.has(fp));
}
