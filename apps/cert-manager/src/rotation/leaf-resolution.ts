import { type ParsedCertificate, canonicalIp, lifetimeMs, renewalTime, signedBy, validAt } from '@outrigger/pki';
import { type KeyPair, type ObservedKeyPair, entryProblem } from './observed-secrets.js';
import { type WebhookBundle, webhooksMissing } from './observed-webhooks.js';
import { type RotationConfig, servingCommonName, servingDnsNames } from './rotation-config.js';
import { describe, formatDuration } from './rotation-messages.js';
import { type IssueFn, type RotationChange, type RotationInput, isFirstInstall } from './rotation-plan.js';

export interface LeafResolution {
  /** The leaf the serving Secret should hold after this run. */
  readonly leaf: KeyPair;
  readonly issued: boolean;
  readonly changes: readonly RotationChange[];
  readonly waiting: readonly string[];
}

/**
 * Keeps the served leaf, or replaces it by one from `signer`.
 *
 * An unusable leaf (missing, unparseable, key mismatch, outside its validity, signed by no CA we
 * can publish) is replaced at once: nothing that works can break. A usable leaf that is due
 * (little life left, wrong names, not from the signer) is replaced only when that cannot break an
 * admission: the signer already signed it, or every webhook already trusts the signer.
 */
export function resolveLeaf(
  input: RotationInput,
  signer: KeyPair,
  publishable: readonly ParsedCertificate[],
  webhooks: readonly WebhookBundle[],
  issue: IssueFn,
): LeafResolution {
  const { now, config } = input;
  const observed = input.servingSecret?.leaf;

  const problem = unusable(input, observed, [signer.cert, ...publishable]);
  const current = observed?.matched;
  if (problem !== undefined || !current) {
    const leaf = issueLeaf(config, signer, now, issue);
    const change: RotationChange = isFirstInstall(input)
      ? { reason: 'LeafIssued', message: `Issued leaf ${describe(leaf.cert)} signed by ${describe(signer.cert)}.` }
      : { reason: 'LeafReplaced', message: `Replaced the serving leaf (${problem}) by ${describe(leaf.cert)} signed by ${describe(signer.cert)}.` };
    return { leaf, issued: true, changes: [change], waiting: [] };
  }

  const fromSigner = signedBy(current.cert, signer.cert);
  const due = dueReasons(config, now, current.cert, signer, fromSigner);
  if (due.length === 0) return { leaf: current, issued: false, changes: [], waiting: [] };

  const missing = fromSigner ? [] : webhooksMissing(webhooks, signer.cert);
  if (missing.length > 0) {
    return {
      leaf: current,
      issued: false,
      changes: [],
      waiting: [`The leaf is due (${due.join('; ')}) but ${missing.join(', ')} do not trust ${describe(signer.cert)} yet; keeping the current leaf.`],
    };
  }
  const leaf = issueLeaf(config, signer, now, issue);
  return {
    leaf,
    issued: true,
    changes: [{ reason: 'LeafRenewed', message: `Renewed the serving leaf (${due.join('; ')}): ${describe(leaf.cert)} signed by ${describe(signer.cert)}.` }],
    waiting: [],
  };
}

function unusable(input: RotationInput, observed: ObservedKeyPair | undefined, cas: readonly ParsedCertificate[]): string | undefined {
  const { now } = input;
  if (observed === undefined) return 'the serving Secret is missing';
  if (observed.cert.state !== 'read') return entryProblem(observed.cert);
  const cert = observed.cert.value;
  if (cert.isCa) return `${observed.cert.dataKey} holds a CA certificate`;
  if (!observed.matched) return `${observed.key.dataKey} is missing or does not match ${observed.cert.dataKey}`;
  if (now.getTime() >= cert.notAfter.getTime()) return `the leaf expired at ${cert.notAfter.toISOString()}`;
  if (!validAt(cert, now)) return `the leaf is not valid before ${cert.notBefore.toISOString()}`;
  if (!cas.some((ca) => signedBy(cert, ca))) return 'the leaf is signed by none of the known CAs';
  return undefined;
}

function dueReasons(config: RotationConfig, now: Date, cert: ParsedCertificate, signer: KeyPair, fromSigner: boolean): string[] {
  const reasons: string[] = [];
  if (!fromSigner) reasons.push(`it is not signed by the signing CA ${describe(signer.cert)}`);

  const wantDns = [...new Set(servingDnsNames(config).map((n) => n.toLowerCase()))].sort();
  const wantIps = [...new Set(config.ipAddresses.map(canonicalIp))].sort();
  if (cert.dnsNames.join() !== wantDns.join() || cert.ipAddresses.join() !== wantIps.join()) {
    reasons.push(`its names [${[...cert.dnsNames, ...cert.ipAddresses].join(', ')}] differ from the configured [${[...wantDns, ...wantIps].join(', ')}]`);
  }

  // Renewing only helps when the new leaf would last longer; a leaf cut at its CA's expiry waits for the CA rotation.
  const renewedUntil = Math.min(now.getTime() + config.leafLifetimeMs, signer.cert.notAfter.getTime());
  if (now.getTime() >= renewalTime(cert, config.renewBeforeFraction).getTime() && renewedUntil > cert.notAfter.getTime()) {
    reasons.push(`it has ${formatDuration(cert.notAfter.getTime() - now.getTime())} of its ${formatDuration(lifetimeMs(cert))} left`);
  }
  return reasons;
}

function issueLeaf(config: RotationConfig, signer: KeyPair, now: Date, issue: IssueFn): KeyPair {
  return issue({
    commonName: servingCommonName(config),
    usage: 'server',
    issuer: { cert: signer.cert.pem, key: signer.key },
    lifetimeMs: Math.min(config.leafLifetimeMs, signer.cert.notAfter.getTime() - now.getTime()),
    dnsNames: servingDnsNames(config),
    ipAddresses: [...config.ipAddresses],
    keyBits: config.keyBits,
    now,
  });
}
