import { isIP } from 'node:net';

const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;

/** Everything the rotation planner needs to know besides the observed state and the clock. */
export interface RotationConfig {
  /** Service in front of the injector; its names become the serving certificate's SANs. */
  readonly serviceName: string;
  /** Install namespace: holds the Service and both Secrets. */
  readonly namespace: string;
  readonly clusterDomain: string;
  /** Added to the four Service names, e.g. a name used by an out-of-cluster client. */
  readonly extraDnsNames: readonly string[];
  readonly ipAddresses: readonly string[];
  /** A CA is named `<caCommonName>-<unix seconds of issue>` (PrintableString: no `@`) so each generation is recognisable. */
  readonly caCommonName: string;
  readonly caLifetimeMs: number;
  /** Clamped to the signing CA's remaining life: a leaf never outlives its CA. */
  readonly leafLifetimeMs: number;
  readonly keyBits: number;
  /** A certificate is renewed (a CA staged) once less than this fraction of its life is left. */
  readonly renewBeforeFraction: number;
  /**
   * How long after a new leaf was written the old CA stays published, so that every injector
   * replica has reloaded the new leaf (kubelet refreshes a mounted Secret only after its sync
   * period plus cache TTL, typically 30–100 s). Ignored when the injectors report what they serve.
   */
  readonly settleMs: number;
  /** Upper bound between two runs: timers drift or stop on suspended machines, so re-read the clock. */
  readonly recheckMs: number;
}

export type RotationConfigInput = Pick<RotationConfig, 'serviceName' | 'namespace'> &
  Partial<Omit<RotationConfig, 'serviceName' | 'namespace'>>;

/**
 * Defaults. A one-year CA is staged with ~122 days left, so the rotation path runs in every
 * installation within a year (a ten-year CA is a rotation nobody has ever exercised) and a
 * stuck rotation leaves four months to notice; the 90-day leaf fits in that window, so in
 * normal operation a leaf is never cut short by its CA.
 */
export const ROTATION_DEFAULTS = {
  clusterDomain: 'cluster.local',
  extraDnsNames: [],
  ipAddresses: [],
  caCommonName: 'outrigger-webhook-ca',
  caLifetimeMs: 365 * DAY,
  leafLifetimeMs: 90 * DAY,
  keyBits: 2048,
  renewBeforeFraction: 1 / 3,
  settleMs: 5 * MINUTE,
  recheckMs: MINUTE,
} as const satisfies Omit<RotationConfig, 'serviceName' | 'namespace'>;

/** ASN.1 PrintableString, the type node-forge gives the subject's CN. */
const PRINTABLE = /^[A-Za-z0-9 '()+,\-./:=?]+$/;
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const DNS_NAME = /^(\*\.)?[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?(\.[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)*$/;

/** One thing wrong with a rotation configuration: which field, and what. */
export interface RotationConfigProblem {
  readonly field: keyof RotationConfig;
  readonly message: string;
}

/** Applies the defaults and rejects a configuration the planner cannot work with (all problems at once). */
export function resolveRotationConfig(input: RotationConfigInput): RotationConfig {
  const config = withRotationDefaults(input);
  const problems = rotationConfigProblems(config);
  if (problems.length > 0) throw new Error(`invalid rotation config: ${problems.map((p) => `${p.field}: ${p.message}`).join('; ')}`);
  return config;
}

export function withRotationDefaults(input: RotationConfigInput): RotationConfig {
  return { ...ROTATION_DEFAULTS, ...definedOnly(input), serviceName: input.serviceName, namespace: input.namespace };
}

/** Every problem of a configuration, by field, so callers can name their own source of it (an environment variable). */
export function rotationConfigProblems(config: RotationConfig): RotationConfigProblem[] {
  const problems: RotationConfigProblem[] = [];
  const problem = (field: keyof RotationConfig, message: string) => problems.push({ field, message });
  if (!DNS_LABEL.test(config.serviceName)) problem('serviceName', `"${config.serviceName}" is not a DNS label`);
  if (!DNS_LABEL.test(config.namespace)) problem('namespace', `"${config.namespace}" is not a DNS label`);
  if (!DNS_NAME.test(config.clusterDomain)) problem('clusterDomain', `"${config.clusterDomain}" is not a DNS name`);
  for (const name of config.extraDnsNames) if (!DNS_NAME.test(name)) problem('extraDnsNames', `"${name}" is not a DNS name`);
  for (const ip of config.ipAddresses) if (isIP(ip) === 0) problem('ipAddresses', `"${ip}" is not an IP address`);
  if (config.caCommonName.trim() === '') problem('caCommonName', 'is empty');
  else if (!PRINTABLE.test(config.caCommonName)) problem('caCommonName', `"${config.caCommonName}" has characters outside ASN.1 PrintableString (Go rejects such certificates)`);
  for (const key of ['caLifetimeMs', 'leafLifetimeMs', 'recheckMs'] as const) {
    if (!(Number.isFinite(config[key]) && config[key] > 0)) problem(key, 'must be a positive duration');
  }
  if (!(Number.isFinite(config.settleMs) && config.settleMs >= 0)) problem('settleMs', 'must be zero or a positive duration');
  if (config.leafLifetimeMs > config.caLifetimeMs) problem('leafLifetimeMs', `must not exceed the CA lifetime (${config.leafLifetimeMs / 1000}s > ${config.caLifetimeMs / 1000}s)`);
  if (!(config.renewBeforeFraction > 0 && config.renewBeforeFraction < 1)) problem('renewBeforeFraction', 'must lie strictly between 0 and 1');
  if (!(Number.isInteger(config.keyBits) && config.keyBits >= 2048)) problem('keyBits', `must be an integer of at least 2048 (got ${config.keyBits})`);
  return problems;
}

/** `svc`, `svc.ns`, `svc.ns.svc`, `svc.ns.svc.<clusterDomain>`, then the extra names; no duplicates. */
export function servingDnsNames(config: RotationConfig): string[] {
  const svc = `${config.serviceName}.${config.namespace}.svc`;
  const names = [config.serviceName, `${config.serviceName}.${config.namespace}`, svc, `${svc}.${config.clusterDomain}`, ...config.extraDnsNames];
  return [...new Set(names)];
}

/** The name the API server dials: `svc.ns.svc`. */
export function servingCommonName(config: RotationConfig): string {
  return `${config.serviceName}.${config.namespace}.svc`;
}

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
