import { type ParsedCertificate, bundleHas, formatBundle, renewalTime, signedBy } from '@outrigger/pki';
import { type BundleResolution, type SettleState, previouslyPublished, resolveBundle, retentionPool, settleState } from './bundle-resolution.js';
import { type CaResolution, resolveCa } from './ca-resolution.js';
import { type LeafResolution, resolveLeaf } from './leaf-resolution.js';
import { type WebhookBundle, holdsExactly } from './observed-webhooks.js';
import { describe } from './rotation-messages.js';
import { type IssueFn, type RotationAction, type RotationChange, type RotationInput, type RotationPhase, type RotationPlan, issueKeyPair } from './rotation-plan.js';
import { CA_SECRET_KEYS, SERVING_ANNOTATIONS, SERVING_SECRET_KEYS, type SecretState } from './secret-layout.js';

/**
 * Secrets + webhooks + clock → the next step of certificate rotation. Pure apart from key
 * generation (`issue`); works on the observed state as read once (observeState), never on PEM text. Level-based: each run looks only at what exists now. Applying a plan and
 * planning again at the same moment either moves to the next stage (a staged CA the webhooks now
 * trust becomes the signer) or yields no actions; it never undoes the previous plan.
 */
export function planRotation(input: RotationInput, issue: IssueFn = issueKeyPair): RotationPlan {
  const { webhooks } = input;
  const ca = resolveCa(input, webhooks, issue);
  const pool = retentionPool(input, ca, webhooks);
  const leaf = resolveLeaf(input, ca.signer, [...(ca.next ? [ca.next.cert] : []), ...pool], webhooks, issue);
  const settle = settleState(input, leaf);
  const bundle = resolveBundle(input, ca, pool, leaf, settle);
  const caBundle = formatBundle(bundle.certs);

  const caSecret: SecretState = {
    data: {
      [CA_SECRET_KEYS.cert]: ca.signer.cert.pem,
      [CA_SECRET_KEYS.key]: ca.signer.key,
      ...(ca.next ? { [CA_SECRET_KEYS.nextCert]: ca.next.cert.pem, [CA_SECRET_KEYS.nextKey]: ca.next.key } : {}),
      [CA_SECRET_KEYS.bundle]: caBundle,
    },
  };
  const servingSecret: SecretState = {
    data: {
      [SERVING_SECRET_KEYS.cert]: leaf.leaf.cert.pem,
      [SERVING_SECRET_KEYS.key]: leaf.leaf.key,
      [SERVING_SECRET_KEYS.bundle]: caBundle,
    },
    annotations: {
      [SERVING_ANNOTATIONS.leafSha256]: leaf.leaf.cert.fingerprint256,
      [SERVING_ANNOTATIONS.leafSince]: settle.since.toISOString(),
    },
  };

  const actions: RotationAction[] = [];
  if (!sameSecret(input.caSecret?.stored, caSecret)) {
    actions.push({ kind: 'write-ca-secret', secret: caSecret, changes: orRepaired([...ca.changes, ...bundle.changes], 'CA') });
  }
  if (!sameSecret(input.servingSecret?.stored, servingSecret)) {
    actions.push({ kind: 'write-serving-secret', secret: servingSecret, changes: servingChanges(input, leaf, bundle, settle) });
  }
  for (const webhook of webhooks) {
    if (holdsExactly(webhook, bundle.certs)) continue;
    actions.push({ kind: 'patch-webhook', name: webhook.name, caBundle, changes: [webhookChange(webhook, bundle.certs, previouslyPublished(input, ca))] });
  }

  return {
    phase: phaseOf(ca, leaf, bundle),
    actions,
    desired: { caSecret, servingSecret, caBundle },
    waiting: [...ca.waiting, ...leaf.waiting, ...bundle.waiting],
    nextRunAt: nextRunAt(input, ca, leaf, bundle, settle),
  };
}

function sameSecret(observed: SecretState | undefined, desired: SecretState): boolean {
  if (!observed) return false;
  return sameRecord(observed.data, desired.data) && Object.entries(desired.annotations ?? {}).every(([k, v]) => observed.annotations?.[k] === v);
}

function sameRecord(a: Readonly<Record<string, string>>, b: Readonly<Record<string, string>>): boolean {
  const keys = Object.keys(b);
  return Object.keys(a).length === keys.length && keys.every((k) => a[k] === b[k]);
}

/** Every write carries at least one reason, even when it only restores the layout. */
function orRepaired(changes: RotationChange[], what: 'CA' | 'serving'): RotationChange[] {
  return changes.length > 0 ? changes : [{ reason: 'SecretRepaired', message: `Rewrote the ${what} Secret: its data did not match the expected layout.` }];
}

function servingChanges(input: RotationInput, leaf: LeafResolution, bundle: BundleResolution, settle: SettleState): RotationChange[] {
  const changes: RotationChange[] = [...leaf.changes];
  const observed = input.servingSecret;
  const trusted = observed?.bundle?.certs ?? [];
  if (observed && !sameSet(trusted, bundle.certs)) {
    changes.push({ reason: 'BundlePublished', message: `The serving Secret's ca.crt now holds ${bundle.certs.map(describe).join(', ')}.` });
  }
  if (observed && !leaf.issued && observed.stored.annotations?.[SERVING_ANNOTATIONS.leafSince] !== settle.since.toISOString()) {
    changes.push({ reason: 'LeafObserved', message: `Recorded ${settle.since.toISOString()} as the time the serving leaf ${describe(leaf.leaf.cert)} was first seen.` });
  }
  return orRepaired(changes, 'serving');
}

function webhookChange(webhook: WebhookBundle, desired: readonly ParsedCertificate[], previous: readonly ParsedCertificate[]): RotationChange {
  const added = desired.filter((c) => !bundleHas(webhook.certs, c));
  const removed = webhook.certs.filter((c) => !bundleHas(desired, c));
  const diff = [
    ...(added.length > 0 ? [`adds ${added.map(describe).join(', ')}`] : []),
    ...(removed.length > 0 ? [`removes ${removed.map(describe).join(', ')}`] : []),
    ...(webhook.unparseable > 0 ? [`replaces ${webhook.unparseable} unparseable block(s)`] : []),
  ].join('; ');
  const wasOurs = webhook.empty || (webhook.unparseable === 0 && sameSet(webhook.certs, previous));
  return wasOurs
    ? { reason: 'BundlePublished', message: `Published the caBundle to ${webhook.name}: ${diff}.` }
    : { reason: 'WebhookDriftFixed', message: `The caBundle of ${webhook.name} drifted from the published bundle; the patch ${diff}.` };
}

function sameSet(a: readonly ParsedCertificate[], b: readonly ParsedCertificate[]): boolean {
  return a.every((c) => bundleHas(b, c)) && b.every((c) => bundleHas(a, c));
}

function phaseOf(ca: CaResolution, leaf: LeafResolution, bundle: BundleResolution): RotationPhase {
  if (ca.next) return 'Staged';
  if (!signedBy(leaf.leaf.cert, ca.signer.cert)) return 'Switching';
  if (bundle.retained.length > 0) return 'Draining';
  return 'Steady';
}

/**
 * The earliest future moment something may become due: leaf renewal or expiry, CA staging or
 * expiry, the settle deadline, a retained CA's expiry; never later than `now + recheckMs`.
 */
function nextRunAt(input: RotationInput, ca: CaResolution, leaf: LeafResolution, bundle: BundleResolution, settle: SettleState): Date {
  const { now, config } = input;
  const candidates = [now.getTime() + config.recheckMs, leaf.leaf.cert.notAfter.getTime(), ca.signer.cert.notAfter.getTime()];
  if (leaf.leaf.cert.notAfter.getTime() < ca.signer.cert.notAfter.getTime()) {
    candidates.push(renewalTime(leaf.leaf.cert, config.renewBeforeFraction).getTime());
  }
  if (!ca.next) candidates.push(renewalTime(ca.signer.cert, config.renewBeforeFraction).getTime());
  if (bundle.retainedForSettle.length > 0 && settle.deadline) candidates.push(settle.deadline.getTime());
  for (const c of bundle.retained) candidates.push(c.notAfter.getTime());
  return new Date(Math.min(...candidates.filter((t) => t > now.getTime())));
}
