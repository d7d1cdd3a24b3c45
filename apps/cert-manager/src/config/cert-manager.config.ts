import { registerAs, type ConfigType } from '@nestjs/config';
import type { WebhookClientTarget } from '@outrigger/admission';
import { INSTALL_NAMES } from '@outrigger/install/names';
import { BACKDATE_MS } from '@outrigger/pki';
import { envField, leaseSettings, parseServiceEnv, serviceEnv } from '@outrigger/service';
import { z } from 'zod';
import { rotationConfigProblems, withRotationDefaults, type RotationConfig } from '../rotation/index.js';

const MINUTE = 60_000;

const duration = envField.optionalDuration;

const schema = z.object({
  /** POD_NAMESPACE (required) holds both Secrets, the Service and the Lease. */
  ...serviceEnv({ leaseName: INSTALL_NAMES.certManager }),
  PORT: envField.port(8080),
  CA_SECRET_NAME: z.string().min(1).default(INSTALL_NAMES.caSecret),
  SERVING_SECRET_NAME: z.string().min(1).default(INSTALL_NAMES.servingSecret),
  SERVICE_NAME: z.string().min(1).default(INSTALL_NAMES.injector),
  CLUSTER_DOMAIN: z.string().optional(),
  EXTRA_DNS_NAMES: envField.list(),
  EXTRA_IP_ADDRESSES: envField.list(),
  CA_LIFETIME: duration(),
  LEAF_LIFETIME: duration(),
  KEY_BITS: z.coerce.number().int().optional(),
  /** How long a retired CA stays published after a new leaf, for injectors to reload it. */
  SETTLE: duration(),
  /** Upper bound between two reconciles, and the wall-clock check period (suspended machines). */
  RECHECK: duration(),
  /** MutatingWebhookConfigurations managed by name (comma-separated). */
  WEBHOOK_NAMES: envField.list(),
  /** Also manage every configuration annotated `outrigger.dev/inject-ca-from: <ns>/<secret>` for our Secrets. */
  WEBHOOK_SELECT_BY_ANNOTATION: envField.bool(true),
  /** true: create the MutatingWebhookConfiguration itself; false: keep a shipped one in sync. */
  REGISTER_WEBHOOK: envField.bool(false),
  WEBHOOK_CONFIGURATION_NAME: z.string().min(1).default(INSTALL_NAMES.webhook),
  /** Register in url mode (https://127.0.0.1:<port>/mutate) for local runs; unset: service mode. */
  WEBHOOK_URL_PORT: z.coerce.number().int().min(1).max(65535).optional(),
  WEBHOOK_SERVICE_PORT: z.coerce.number().int().min(1).max(65535).default(443),
  WEBHOOK_FAILURE_POLICY: z.enum(['Fail', 'Ignore']).default('Fail'),
  /** /readyz fails when the serving leaf expires sooner than this. */
  READY_MIN_VALIDITY: duration(),
});

/** Where each rotation setting comes from, so a problem names the variable an operator sets. */
const ROTATION_ENV: Partial<Record<keyof RotationConfig, string>> = {
  serviceName: 'SERVICE_NAME',
  namespace: 'POD_NAMESPACE',
  clusterDomain: 'CLUSTER_DOMAIN',
  extraDnsNames: 'EXTRA_DNS_NAMES',
  ipAddresses: 'EXTRA_IP_ADDRESSES',
  caLifetimeMs: 'CA_LIFETIME',
  leafLifetimeMs: 'LEAF_LIFETIME',
  keyBits: 'KEY_BITS',
  settleMs: 'SETTLE',
  recheckMs: 'RECHECK',
};

export const certManagerConfig = registerAs('certManager', () => {
  // Strict: a retired or mistyped variable stops startup, named (libs/service strict-settings.ts).
  const env = parseServiceEnv(schema);
  const rotation = withRotationDefaults({
    serviceName: env.SERVICE_NAME,
    namespace: env.POD_NAMESPACE,
    clusterDomain: env.CLUSTER_DOMAIN,
    extraDnsNames: env.EXTRA_DNS_NAMES,
    ipAddresses: env.EXTRA_IP_ADDRESSES,
    caLifetimeMs: env.CA_LIFETIME,
    leafLifetimeMs: env.LEAF_LIFETIME,
    keyBits: env.KEY_BITS,
    settleMs: env.SETTLE,
    recheckMs: env.RECHECK,
  });
  // Certificates are back-dated (BACKDATE_MS) and the back-dating counts in their life: a lifetime
  // this short would be renewed as soon as it is issued, on every run.
  const minLifetimeMs = (BACKDATE_MS * rotation.renewBeforeFraction) / (1 - rotation.renewBeforeFraction) + MINUTE / 2;
  const short = (['CA_LIFETIME', 'LEAF_LIFETIME'] as const).filter((k) => (k === 'CA_LIFETIME' ? rotation.caLifetimeMs : rotation.leafLifetimeMs) < minLifetimeMs);
  const problems = [
    ...short.map((k) => `  ${k}: must be at least ${Math.ceil(minLifetimeMs / 1000)}s (certificates are back-dated ${BACKDATE_MS / 1000}s)`),
    ...rotationConfigProblems(rotation).map((p) => `  ${ROTATION_ENV[p.field] ?? p.field}: ${p.message}`),
  ];
  if (problems.length > 0) throw new Error(`invalid configuration:\n${problems.join('\n')}`);
  const client: WebhookClientTarget =
    env.WEBHOOK_URL_PORT !== undefined
      ? { mode: 'url', port: env.WEBHOOK_URL_PORT }
      : { mode: 'service', name: env.SERVICE_NAME, namespace: env.POD_NAMESPACE, port: env.WEBHOOK_SERVICE_PORT };
  return {
    port: env.PORT,
    namespace: env.POD_NAMESPACE,
    instance: env.POD_NAME,
    kubeconfig: env.KUBECONFIG,
    caSecretName: env.CA_SECRET_NAME,
    servingSecretName: env.SERVING_SECRET_NAME,
    rotation,
    webhooks: {
      names: env.WEBHOOK_NAMES,
      selectByAnnotation: env.WEBHOOK_SELECT_BY_ANNOTATION,
      register: env.REGISTER_WEBHOOK
        ? { name: env.WEBHOOK_CONFIGURATION_NAME, client, failurePolicy: env.WEBHOOK_FAILURE_POLICY }
        : undefined,
    },
    lease: leaseSettings(env),
    /** Wall-clock check: never longer than the planner's recheck bound, at most every 30 s. */
    wallClockCheckMs: Math.min(30_000, rotation.recheckMs),
    readyMinValidityMs: env.READY_MIN_VALIDITY,
  };
});

export type CertManagerConfig = ConfigType<typeof certManagerConfig>;
