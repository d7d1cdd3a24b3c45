/**
 * Data keys and annotations of the two Secrets the cert-manager owns. Values are PEM text; the
 * effectful shell base64-encodes and decodes them at the Kubernetes API boundary.
 *
 * CA Secret (type Opaque):
 * - `ca.crt`, `ca.key`: the signing CA, the only CA that signs new leaves.
 * - `ca-next.crt`, `ca-next.key`: present only while a new CA is staged (published, not yet signing).
 * - `ca-bundle.crt`: the bundle last published to the webhooks: the signer, the staged CA and any
 *   retired CA a served leaf may still depend on. It is the planner's record of what it published.
 *
 * Serving Secret (type kubernetes.io/tls), mounted by the injector:
 * - `tls.crt`, `tls.key`: the serving leaf, signed by a CA of the bundle.
 * - `ca.crt`: the same bundle as `ca-bundle.crt`.
 * - annotations `outrigger.dev/leaf-sha256` and `outrigger.dev/leaf-since`: when the manager first
 *   wrote (or saw) this leaf, the start of the settle delay before an old CA may be dropped.
 */
export const CA_SECRET_KEYS = {
  cert: 'ca.crt',
  key: 'ca.key',
  nextCert: 'ca-next.crt',
  nextKey: 'ca-next.key',
  bundle: 'ca-bundle.crt',
} as const;

export const SERVING_SECRET_KEYS = {
  cert: 'tls.crt',
  key: 'tls.key',
  bundle: 'ca.crt',
} as const;

export const SERVING_ANNOTATIONS = {
  leafSha256: 'outrigger.dev/leaf-sha256',
  leafSince: 'outrigger.dev/leaf-since',
} as const;

export const SERVING_SECRET_TYPE = 'kubernetes.io/tls';

/** A Secret as the planner sees it: decoded data and (only the planner's own) annotations. */
export interface SecretState {
  readonly data: Readonly<Record<string, string>>;
  readonly annotations?: Readonly<Record<string, string>>;
}
