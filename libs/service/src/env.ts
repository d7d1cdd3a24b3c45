import { z } from 'zod';
import { parseDuration } from '@outrigger/kube';

/**
 * Validates the process environment once, at startup, against a zod schema and returns the typed
 * result. All problems (and `moreProblems`, lines found by other checks) are reported together, each
 * naming its variable.
 */
export function parseEnv<S extends z.ZodType>(schema: S, env: NodeJS.ProcessEnv = process.env, moreProblems: readonly string[] = []): z.infer<S> {
  const result = schema.safeParse(env);
  const problems = [...(result.success ? [] : result.error.issues.map((i) => `  ${i.path.join('.') || '(environment)'}: ${i.message}`)), ...moreProblems];
  if (result.success && problems.length === 0) return result.data;
  throw new Error(`invalid configuration:\n${problems.join('\n')}`);
}

/** A duration (`90d`, `1h30m`, `45s`, `500ms`) in milliseconds; undefined when unset or empty. */
function optionalDuration() {
  return z
    .string()
    .optional()
    .transform((value, ctx) => {
      if (value === undefined || value.trim() === '') return undefined;
      try {
        return parseDuration(value);
      } catch (error) {
        ctx.addIssue({ code: 'custom', message: (error as Error).message });
        return z.NEVER;
      }
    });
}

/** Reusable field schemas for environment variables (all arrive as strings). */
export const envField = {
  port: (fallback: number) => z.coerce.number().int().min(1).max(65535).default(fallback),
  /** Milliseconds, from one duration syntax for every service; `fallback` in the same syntax. */
  duration: (fallback: string) => optionalDuration().transform((ms) => ms ?? parseDuration(fallback)),
  optionalDuration,
  bool: (fallback: boolean) =>
    z
      .enum(['true', 'false', '1', '0'])
      .default(fallback ? 'true' : 'false')
      .transform((v) => v === 'true' || v === '1'),
  list: () =>
    z
      .string()
      .default('')
      .transform((v) => v.split(',').map((s) => s.trim()).filter(Boolean)),
};

const NAMESPACE_REQUIRED = 'the install namespace is required (set it from the downward API)';

/**
 * What every service reads the same way: its namespace and name (downward API), the kubeconfig,
 * and its leader-election Lease. Spread into a service's schema; `leaseSettings` derives the rest.
 */
export function serviceEnv(defaults: { leaseName: string; namespace?: string }) {
  return {
    /** The install namespace (downward API); the Lease lives here unless LEASE_NAMESPACE says otherwise. */
    POD_NAMESPACE: defaults.namespace === undefined ? z.string({ error: NAMESPACE_REQUIRED }).min(1, NAMESPACE_REQUIRED) : z.string().min(1).default(defaults.namespace),
    /** The replica's name (downward API): its Lease identity. */
    POD_NAME: z.string().optional(),
    /** Unset: $KUBECONFIG semantics of client-go, else in-cluster credentials. */
    KUBECONFIG: z.string().optional(),
    LEASE_NAME: z.string().min(1).default(defaults.leaseName),
    LEASE_NAMESPACE: z.string().optional(),
    LEASE_DURATION: envField.duration('15s'),
    /** Default two thirds of LEASE_DURATION, as client-go's 15 s / 10 s. */
    LEASE_RENEW_DEADLINE: optionalDuration(),
    /** Default two fifteenths of LEASE_DURATION, as client-go's 15 s / 2 s. */
    LEASE_RETRY_PERIOD: optionalDuration(),
  };
}

export interface LeaseSettings {
  readonly name: string;
  readonly namespace: string;
  readonly identity?: string;
  readonly leaseDurationMs: number;
  readonly renewDeadlineMs: number;
  readonly retryPeriodMs: number;
}

/** The Lease settings from a parsed serviceEnv. */
export function leaseSettings(env: z.infer<z.ZodObject<ReturnType<typeof serviceEnv>>>): LeaseSettings {
  const durationMs = env.LEASE_DURATION;
  return {
    name: env.LEASE_NAME,
    namespace: env.LEASE_NAMESPACE ?? env.POD_NAMESPACE,
    ...(env.POD_NAME ? { identity: env.POD_NAME } : {}),
    leaseDurationMs: durationMs,
    renewDeadlineMs: env.LEASE_RENEW_DEADLINE ?? Math.round((durationMs * 2) / 3),
    retryPeriodMs: env.LEASE_RETRY_PERIOD ?? Math.round((durationMs * 2) / 15),
  };
}
