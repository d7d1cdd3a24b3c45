// Helpers for the rotation specs only (no test-framework imports, so it type-checks with the sources).
import { X509Certificate } from 'node:crypto';
import { type CertificateRequest, splitPemBundle } from '@outrigger/pki';
import { type ObservedState, type SecretNames, type StoredState, observeState } from './observed-state.js';
import { type RotationConfig, type RotationConfigInput, resolveRotationConfig } from './rotation-config.js';
import { type IssueFn, type RotationInput, type RotationPlan, issueKeyPair } from './rotation-plan.js';
import { planRotation } from './rotation-planner.js';

export const MINUTE = 60_000;
export const HOUR = 60 * MINUTE;
export const T0 = new Date('2027-03-01T00:00:00Z');
export const WEBHOOKS = ['outrigger-injector/inject.outrigger.dev', 'outrigger-injector/fallback.outrigger.dev'];
export const SECRET_NAMES: SecretNames = { caSecret: 'outrigger-system/outrigger-webhook-ca', servingSecret: 'outrigger-system/outrigger-injector-tls' };

export function after(ms: number, from: Date = T0): Date {
  return new Date(from.getTime() + ms);
}

/**
 * Short lifetimes so a test can walk through rotations: CA 10 h (staged 6 h 38 min in), leaf 3 h
 * (renewed 1 h 58 min in), settle 10 min.
 */
export function testConfig(overrides: Partial<RotationConfigInput> = {}): RotationConfig {
  return resolveRotationConfig({
    serviceName: 'injector',
    namespace: 'outrigger-system',
    caLifetimeMs: 10 * HOUR,
    leafLifetimeMs: 3 * HOUR,
    settleMs: 10 * MINUTE,
    ...overrides,
  });
}

/** The real issuer, counting calls and remembering requests. */
export function recordingIssuer(inner: IssueFn = issueKeyPair): IssueFn & { readonly requests: CertificateRequest[] } {
  const requests: CertificateRequest[] = [];
  const issue = (request: CertificateRequest) => {
    requests.push(request);
    return inner(request);
  };
  return Object.assign(issue, { requests });
}

/** What the cluster holds, as stored (decoded Secret data, caBundle text): what the plans write. */
export type World = StoredState;

export function emptyWorld(names: readonly string[] = WEBHOOKS): World {
  return { webhooks: names.map((name) => ({ name })) };
}

/** Applies every action of a plan, as the shell does when all writes succeed. */
export function apply(world: World, plan: RotationPlan, only: { webhooks?: boolean } = {}): World {
  let next: World = world;
  for (const action of plan.actions) {
    if (action.kind === 'write-ca-secret') next = { ...next, caSecret: action.secret };
    else if (action.kind === 'write-serving-secret') next = { ...next, servingSecret: action.secret };
    else if (only.webhooks !== false) {
      next = { ...next, webhooks: next.webhooks.map((w) => (w.name === action.name ? { name: w.name, caBundle: action.caBundle } : w)) };
    }
  }
  return next;
}

/** The world read at the edge, as the controller reads what it observed. */
export function observe(world: World): ObservedState {
  return observeState(world, SECRET_NAMES);
}

export function inputFor(world: World, now: Date, config: RotationConfig, extra: Partial<RotationInput> = {}): RotationInput {
  return { now, config, ...observe(world), ...extra };
}

/** Plans and applies at `from`, then every `stepMs` up to and including `to`; returns the world at `to`. */
export function run(world: World, config: RotationConfig, from: Date, to: Date, stepMs: number, issue?: IssueFn): World {
  let current = world;
  for (let t = from.getTime(); t <= to.getTime(); t += stepMs) {
    current = apply(current, planRotation(inputFor(current, new Date(t), config), issue));
  }
  return current;
}

export function fingerprint(pem: string): string {
  return new X509Certificate(pem).fingerprint256;
}

export function bundleFingerprints(bundle: string | undefined): string[] {
  return splitPemBundle(bundle ?? '').map(fingerprint);
}

export function kinds(plan: RotationPlan): string[] {
  return plan.actions.map((a) => a.kind);
}

export function reasons(plan: RotationPlan): string[] {
  return plan.actions.flatMap((a) => a.changes.map((c) => c.reason));
}

/** Narrows away undefined, failing loudly (the specs avoid non-null assertions). */
export function defined<T>(value: T | undefined, what = 'value'): T {
  if (value === undefined) throw new Error(`expected ${what} to be defined`);
  return value;
}
