import { type ParsedCertificate, lifetimeMs, renewalTime, validAt } from '@outrigger/pki';
import { type KeyPair, type ObservedKeyPair, entryProblem } from './observed-secrets.js';
import { type WebhookBundle, webhooksMissing } from './observed-webhooks.js';
import type { RotationConfig } from './rotation-config.js';
import { describe, formatDuration } from './rotation-messages.js';
import { type IssueFn, type RotationChange, type RotationInput, isFirstInstall } from './rotation-plan.js';
import { CA_SECRET_KEYS } from './secret-layout.js';

/** Which CA signs, which is staged, and what the CA Secret remembers, after this run's CA steps. */
export interface CaResolution {
  readonly signer: KeyPair;
  /** Published beside the signer, not yet signing. */
  readonly next?: KeyPair;
  /** CAs that stopped signing in this run or lost their key; still valid, so a leaf may depend on them. */
  readonly displaced: readonly ParsedCertificate[];
  /** The CA Secret's record of the published bundle; undefined when missing or unreadable. */
  readonly recorded?: readonly ParsedCertificate[];
  readonly changes: readonly RotationChange[];
  readonly waiting: readonly string[];
}

type Loaded = { readonly pair: KeyPair } | { readonly problem: string; readonly cert?: ParsedCertificate };

/**
 * The CA steps of a run, in order: load the signer and the staged CA (a broken staged CA is
 * discarded); replace an unusable signer (promote the staged CA, else generate one); promote a
 * staged CA that every webhook already trusts; stage a new CA when the signer is due.
 */
export function resolveCa(input: RotationInput, webhooks: readonly WebhookBundle[], issue: IssueFn): CaResolution {
  const { now, config } = input;
  const observed = input.caSecret;
  const changes: RotationChange[] = [];
  const waiting: string[] = [];
  const displaced: ParsedCertificate[] = [];

  const current: Loaded = observed ? loadCa(observed.signer, now) : { problem: `${CA_SECRET_KEYS.cert} is missing` };
  let next: KeyPair | undefined;
  if (observed && (observed.next.cert.state !== 'missing' || observed.next.key.state !== 'missing')) {
    const staged = loadCa(observed.next, now);
    if ('pair' in staged) next = staged.pair;
    else changes.push({ reason: 'StagedCaDiscarded', message: `Discarded the staged CA: ${staged.problem}.` });
  }
  const stagedInInput = next;

  let signer: KeyPair;
  if ('pair' in current) {
    signer = current.pair;
  } else {
    if (current.cert && validAt(current.cert, now)) displaced.push(current.cert);
    if (next) {
      signer = next;
      next = undefined;
      changes.push({
        reason: 'SignerForced',
        message: `The signing CA is unusable (${current.problem}); promoted the staged CA ${describe(signer.cert)} without waiting for the webhooks.`,
      });
    } else {
      signer = generateCa(config, now, issue);
      changes.push(
        isFirstInstall(input)
          ? { reason: 'CaCreated', message: `Generated CA ${describe(signer.cert)}.` }
          : {
              reason: 'CaRecovered',
              message: `The CA Secret is unusable (${observed === undefined ? 'it is missing' : current.problem}); generated CA ${describe(signer.cert)}.`,
            },
      );
    }
  }

  if (next && next === stagedInInput) {
    const missing = webhooksMissing(webhooks, next.cert);
    if (missing.length === 0) {
      displaced.push(signer.cert);
      changes.push({
        reason: 'SignerSwitched',
        message: `Every webhook trusts the staged CA ${describe(next.cert)}; it now signs leaves, and ${describe(signer.cert)} stays published until the injectors serve the new leaf.`,
      });
      signer = next;
      next = undefined;
    } else {
      waiting.push(`Staged CA ${describe(next.cert)} is not yet in the caBundle of ${missing.join(', ')}; leaves stay signed by ${describe(signer.cert)}.`);
    }
  }

  if (!next && now.getTime() >= renewalTime(signer.cert, config.renewBeforeFraction).getTime()) {
    next = generateCa(config, now, issue);
    changes.push({
      reason: 'CaStaged',
      message:
        `CA ${describe(signer.cert)} has ${formatDuration(signer.cert.notAfter.getTime() - now.getTime())} of its ` +
        `${formatDuration(lifetimeMs(signer.cert))} left; staged CA ${describe(next.cert)} beside it. Leaves stay signed by the old CA until every webhook trusts the new one.`,
    });
  }

  const record = observed?.bundle;
  const recorded = record && record.unparseable === 0 && record.certs.length > 0 ? record.certs : undefined;
  return { signer, next, displaced, recorded, changes, waiting };
}

/** A usable CA: a CA certificate, valid now, with its key. */
function loadCa(observed: ObservedKeyPair, now: Date): Loaded {
  const { cert: certEntry, key: keyEntry } = observed;
  if (certEntry.state !== 'read') return { problem: entryProblem(certEntry) };
  const cert = certEntry.value;
  const crt = certEntry.dataKey;
  if (!cert.isCa) return { problem: `${crt} is not a CA certificate` };
  if (now.getTime() >= cert.notAfter.getTime()) return { problem: `${crt} expired at ${cert.notAfter.toISOString()}`, cert };
  if (now.getTime() < cert.notBefore.getTime()) return { problem: `${crt} is not valid before ${cert.notBefore.toISOString()}`, cert };
  if (keyEntry.state === 'missing') return { problem: `${keyEntry.dataKey} is missing`, cert };
  if (!observed.matched) return { problem: `${keyEntry.dataKey} does not match ${crt}`, cert };
  return { pair: observed.matched };
}

function generateCa(config: RotationConfig, now: Date, issue: IssueFn): KeyPair {
  return issue({
    // "-", not "@": node-forge writes the CN as PrintableString, which has no "@", and Go (the
    // API server) then refuses the whole caBundle ("invalid RDNSequence"); openssl does not mind.
    commonName: `${config.caCommonName}-${Math.floor(now.getTime() / 1000)}`,
    usage: 'ca',
    lifetimeMs: config.caLifetimeMs,
    keyBits: config.keyBits,
    now,
  });
}
