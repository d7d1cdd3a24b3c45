import { type ParsedCertificate, bundleHas, normalizeFingerprint, signedBy, uniqueByFingerprint, validAt } from '@outrigger/pki';
import type { CaResolution } from './ca-resolution.js';
import type { LeafResolution } from './leaf-resolution.js';
import type { KeyPair } from './observed-secrets.js';
import type { WebhookBundle } from './observed-webhooks.js';
import { describe, formatDuration } from './rotation-messages.js';
import type { RotationChange, RotationInput } from './rotation-plan.js';

/** Whether every injector replica can be assumed to serve the leaf of the serving Secret. */
export interface SettleState {
  /** When the manager wrote (or first saw) this leaf. */
  readonly since: Date;
  readonly settled: boolean;
  /** When the settle delay ends; undefined when the injectors report what they serve. */
  readonly deadline?: Date;
  /** For messages: why it is settled, or (when not) the condition awaited, phrased to follow "until". */
  readonly detail: string;
}

export function settleState(input: RotationInput, leaf: LeafResolution): SettleState {
  const { now, config } = input;
  const fingerprint = normalizeFingerprint(leaf.leaf.cert.fingerprint256);
  const recordedSince = input.servingSecret?.recordedLeafSince;
  const recordedFor = input.servingSecret?.recordedLeafSha256;
  const since = !leaf.issued && recordedFor === fingerprint && recordedSince !== undefined ? recordedSince : now;

  const reported = (input.servingFingerprints ?? []).map(normalizeFingerprint);
  if (reported.length > 0) {
    const stale = reported.filter((fp) => fp !== fingerprint).length;
    return stale === 0
      ? { since, settled: true, detail: `all ${reported.length} injector replicas report serving the current leaf` }
      : { since, settled: false, detail: `every injector replica serves the current leaf (${stale} of ${reported.length} still serve another)` };
  }
  const deadline = new Date(since.getTime() + config.settleMs);
  return now.getTime() >= deadline.getTime()
    ? { since, settled: true, deadline, detail: `the current leaf has been in place since ${since.toISOString()} (settle delay ${formatDuration(config.settleMs)})` }
    : { since, settled: false, deadline, detail: `the injectors have reloaded the leaf written at ${since.toISOString()} (settle delay ends ${deadline.toISOString()})` };
}

/**
 * CAs other than the signer and the staged CA that may deserve a place in the bundle: what we last
 * published, what the serving Secret trusts, CAs displaced in this run and, when the CA Secret
 * lost its record, what the webhooks hold. Only CAs still valid count.
 */
export function retentionPool(input: RotationInput, ca: CaResolution, webhooks: readonly WebhookBundle[]): ParsedCertificate[] {
  const serving = input.servingSecret?.bundle?.certs ?? [];
  const fromWebhooks = ca.recorded === undefined ? webhooks.flatMap((w) => w.certs) : [];
  const own = [ca.signer, ca.next].filter((p): p is KeyPair => p !== undefined);
  return uniqueByFingerprint([...(ca.recorded ?? []), ...serving, ...ca.displaced, ...fromWebhooks]).filter(
    (c) => c.isCa && validAt(c, input.now) && !own.some((p) => p.cert.fingerprint256 === c.fingerprint256),
  );
}

export interface BundleResolution {
  /** Signer first, then the staged CA, then retained CAs (latest expiry first). */
  readonly certs: readonly ParsedCertificate[];
  readonly retained: readonly ParsedCertificate[];
  /** Retained only because the injectors have not settled; they go once they have. */
  readonly retainedForSettle: readonly ParsedCertificate[];
  readonly changes: readonly RotationChange[];
  readonly waiting: readonly string[];
}

/**
 * The bundle to publish. A pool CA stays while the served leaf is signed by it, and — whatever
 * signed the current leaf — until the injectors have settled on it, because a replica may still
 * serve the previous leaf.
 */
export function resolveBundle(input: RotationInput, ca: CaResolution, pool: readonly ParsedCertificate[], leaf: LeafResolution, settle: SettleState): BundleResolution {
  const leafCert = leaf.leaf.cert;
  const retained = pool
    .filter((c) => signedBy(leafCert, c) || !settle.settled)
    .sort((a, b) => b.notAfter.getTime() - a.notAfter.getTime() || a.fingerprint256.localeCompare(b.fingerprint256));
  const retainedForSettle = retained.filter((c) => !signedBy(leafCert, c));
  const certs = [ca.signer.cert, ...(ca.next ? [ca.next.cert] : []), ...retained];

  const previous = previouslyPublished(input, ca);
  const changes: RotationChange[] = [];
  for (const c of retained) {
    // Without the CA Secret's record every kept CA is news, even if the serving Secret trusted it.
    if (ca.recorded && bundleHas(ca.recorded, c)) continue;
    changes.push({
      reason: 'CaRetained',
      message: signedBy(leafCert, c)
        ? `Kept ${describe(c)} in the bundle: the served leaf is signed by it.`
        : `Kept ${describe(c)} in the bundle until ${settle.detail}: a replica may still serve a leaf signed by it.`,
    });
  }
  for (const c of previous) {
    if (bundleHas(certs, c)) continue;
    const why = !validAt(c, input.now)
      ? 'it is no longer valid'
      : pool.some((p) => p.fingerprint256 === c.fingerprint256)
        ? `the served leaf ${describe(leafCert)} is not signed by it and ${settle.detail}`
        : 'no served leaf can depend on it';
    changes.push({ reason: 'CaDropped', message: `Dropped ${describe(c)} from the bundle: ${why}.` });
  }
  const waiting = retainedForSettle.map((c) => `Keeping ${describe(c)} published until ${settle.detail}.`);
  return { certs, retained, retainedForSettle, changes, waiting };
}

/** The bundle published by the last run, as far as we know: the CA Secret's record, else the serving Secret's ca.crt. */
export function previouslyPublished(input: RotationInput, ca: CaResolution): readonly ParsedCertificate[] {
  return ca.recorded ?? input.servingSecret?.bundle?.certs ?? [];
}
