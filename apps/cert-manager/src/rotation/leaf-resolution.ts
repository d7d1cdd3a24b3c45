import {
  type Cert,
  type KeyPair,
  canonicalIp,
  describe,
  formatDuration,
  isValidAt,
  keyMatches,
  lifeMs,
  parseCertificate,
  renewalTime,
  signedBy,
  subjectAltNames,
} from './certificate-facts.js';
import { type WebhookBundle, webhooksMissing } from './observed-webhooks.js';
import { type RotationConfig, servingCommonName, servingDnsNames } from './rotation-config.js';
import { type IssueFn, type RotationChange, type RotationInput, isFirstInstall } from './rotation-plan.js';
import { SERVING_SECRET_KEYS } from './secret-layout.js';

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
  publishable: readonly Cert[],
  webhooks: readonly WebhookBundle[],
  issue: IssueFn,
): LeafResolution {
  const { now, config } = input;
  const data = input.servingSecret?.data ?? {};
  const cert = parseCertificate(data[SERVING_SECRET_KEYS.cert]);
  const key = data[SERVING_SECRET_KEYS.key];

  const problem = unusable(input, cert, key, [signer.cert, ...publishable]);
  if (problem !== undefined || !cert || key === undefined) {
    const leaf = issueLeaf(config, signer, now, issue);
    const change: RotationChange = isFirstInstall(input)
      ? { reason: 'LeafIssued', message: `Issued leaf ${describe(leaf.cert)} signed by ${describe(signer.cert)}.` }
      : { reason: 'LeafReplaced', message: `Replaced the serving leaf (${problem}) by ${describe(leaf.cert)} signed by ${describe(signer.cert)}.` };
    return { leaf, issued: true, changes: [change], waiting: [] };
  }

  const current: KeyPair = { cert, key };
  const fromSigner = signedBy(cert, signer.cert);
  const due = dueReasons(config, now, cert, signer, fromSigner);
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

function unusable(input: RotationInput, cert: Cert | undefined, key: string | undefined, cas: readonly Cert[]): string | undefined {
  const { now } = input;
  if (input.servingSecret === undefined) return 'the serving Secret is missing';
  if (input.servingSecret.data[SERVING_SECRET_KEYS.cert] === undefined) return 'tls.crt is missing';
  if (!cert) return 'tls.crt does not parse';
  if (cert.x509.ca) return 'tls.crt holds a CA certificate';
  if (!keyMatches(cert, key)) return 'tls.key is missing or does not match tls.crt';
  if (now.getTime() >= cert.notAfter.getTime()) return `the leaf expired at ${cert.notAfter.toISOString()}`;
  if (!isValidAt(cert, now)) return `the leaf is not valid before ${cert.notBefore.toISOString()}`;
  if (!cas.some((ca) => signedBy(cert, ca))) return 'the leaf is signed by none of the known CAs';
  return undefined;
}

function dueReasons(config: RotationConfig, now: Date, cert: Cert, signer: KeyPair, fromSigner: boolean): string[] {
  const reasons: string[] = [];
  if (!fromSigner) reasons.push(`it is not signed by the signing CA ${describe(signer.cert)}`);

  const names = subjectAltNames(cert);
  const wantDns = [...new Set(servingDnsNames(config).map((n) => n.toLowerCase()))].sort();
  const wantIps = [...new Set(config.ipAddresses.map(canonicalIp))].sort();
  if (names.dnsNames.join() !== wantDns.join() || names.ipAddresses.join() !== wantIps.join()) {
    reasons.push(`its names [${[...names.dnsNames, ...names.ipAddresses].join(', ')}] differ from the configured [${[...wantDns, ...wantIps].join(', ')}]`);
  }

  // Renewing only helps when the new leaf would last longer; a leaf cut at its CA's expiry waits for the CA rotation.
  const renewedUntil = Math.min(now.getTime() + config.leafLifetimeMs, signer.cert.notAfter.getTime());
  if (now.getTime() >= renewalTime(cert, config.renewBeforeFraction).getTime() && renewedUntil > cert.notAfter.getTime()) {
    reasons.push(`it has ${formatDuration(cert.notAfter.getTime() - now.getTime())} of its ${formatDuration(lifeMs(cert))} left`);
  }
  return reasons;
}

function issueLeaf(config: RotationConfig, signer: KeyPair, now: Date, issue: IssueFn): KeyPair {
  const issued = issue({
    commonName: servingCommonName(config),
    usage: 'server',
    issuer: { cert: signer.cert.pem, key: signer.key },
    lifetimeMs: Math.min(config.leafLifetimeMs, signer.cert.notAfter.getTime() - now.getTime()),
    dnsNames: servingDnsNames(config),
    ipAddresses: [...config.ipAddresses],
    keyBits: config.keyBits,
    now,
  });
  const cert = parseCertificate(issued.cert);
  if (!cert) throw new Error('the issuer returned a leaf certificate that does not parse');
  return { cert, key: issued.key };
}
