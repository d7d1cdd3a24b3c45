import { type CertificateRequest, issueCertificate, parseCertificate } from '@outrigger/pki';
import type { ObservedState } from './observed-state.js';
import type { KeyPair } from './observed-secrets.js';
import type { RotationConfig } from './rotation-config.js';
import type { SecretState } from './secret-layout.js';

/** The planner's input: the clock, the configuration and what the cluster holds, read once (see observeState). */
export interface RotationInput extends ObservedState {
  readonly now: Date;
  readonly config: RotationConfig;
  /**
   * SHA-256 fingerprints of the leaf each injector replica currently serves, when the injectors
   * report them. Undefined or empty: unknown, and the settle delay applies instead.
   */
  readonly servingFingerprints?: readonly string[];
}

/** Key generation is the planner's only side effect; tests may wrap or replace it. */
export type IssueFn = (request: CertificateRequest) => KeyPair;

/** The real issuer (libs/pki), its certificate read once as it comes out. */
export const issueKeyPair: IssueFn = (request) => {
  const issued = issueCertificate(request);
  const cert = parseCertificate(issued.cert);
  if (!cert) throw new Error(`the issuer returned a ${request.usage} certificate that does not parse`);
  return { cert, key: issued.key };
};

/**
 * Where the rotation stands after the plan is applied:
 * - `Steady`: one CA, it signed the leaf, it is the whole bundle.
 * - `Staged`: a new CA is published beside the signer; waiting for every webhook to trust it.
 * - `Switching`: the signer did not sign the served leaf and not every webhook trusts it yet
 *   (after a CA was recovered); the old CA stays published.
 * - `Draining`: the leaf comes from the signer; a retired CA stays published until injectors settle.
 */
export type RotationPhase = 'Steady' | 'Staged' | 'Switching' | 'Draining';

/** Short CamelCase reasons, usable as Kubernetes Event reasons. */
export type ChangeReason =
  | 'CaCreated'
  | 'CaRecovered'
  | 'CaStaged'
  | 'StagedCaDiscarded'
  | 'SignerSwitched'
  | 'SignerForced'
  | 'CaRetained'
  | 'CaDropped'
  | 'LeafIssued'
  | 'LeafReplaced'
  | 'LeafRenewed'
  | 'LeafObserved'
  | 'BundlePublished'
  | 'WebhookDriftFixed'
  | 'SecretRepaired';

export interface RotationChange {
  readonly reason: ChangeReason;
  /** One sentence for Events and logs: what changed and why. */
  readonly message: string;
}

/**
 * One write. Actions come in the only safe order: CA Secret (the keys are durable before anything
 * depends on them), serving Secret, then webhook patches. Stop at the first failure and run again.
 */
export type RotationAction =
  | { readonly kind: 'write-ca-secret'; readonly secret: SecretState; readonly changes: readonly RotationChange[] }
  | { readonly kind: 'write-serving-secret'; readonly secret: SecretState; readonly changes: readonly RotationChange[] }
  | { readonly kind: 'patch-webhook'; readonly name: string; readonly caBundle: string; readonly changes: readonly RotationChange[] };

export interface RotationPlan {
  readonly phase: RotationPhase;
  /** Empty when everything already matches. */
  readonly actions: readonly RotationAction[];
  /** The complete desired state, whether or not it differs from the observed one. */
  readonly desired: {
    readonly caSecret: SecretState;
    readonly servingSecret: SecretState;
    readonly caBundle: string;
  };
  /** Why a pending step did not happen yet (for logs and status), e.g. a webhook not yet trusting a CA. */
  readonly waiting: readonly string[];
  /** Run again no later than this: earliest threshold or deadline, capped at `now + recheckMs`. */
  readonly nextRunAt: Date;
}

/** Nothing exists yet: no Secret, and no webhook holds a CA. Anything else is a recovery. */
export function isFirstInstall(input: RotationInput): boolean {
  return input.caSecret === undefined && input.servingSecret === undefined && input.webhooks.every((w) => w.empty);
}
