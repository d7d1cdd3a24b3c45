import { X509Certificate } from 'node:crypto';
import { type CertificateRequest, splitPemBundle } from '@outrigger/pki';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { RotationConfig } from './rotation-config.js';
import { type ChangeReason, type IssueFn, type RotationPlan, issueKeyPair } from './rotation-plan.js';
import { planRotation } from './rotation-planner.js';
import { SERVING_SECRET_KEYS } from './secret-layout.js';
import { HOUR, MINUTE, T0, type World, defined, emptyWorld, inputFor, testConfig } from './test-support.js';

/**
 * A simulated cluster driven by the planner the way the effectful shell will drive it:
 * - Secret writes land at once; a webhook patch takes effect (and is observed) one step later.
 * - Each injector replica serves the newest leaf written at least `lag` ago (kubelet refresh delay).
 * - Between two steps any replica may serve either of its leaves and any webhook may use either of
 *   its bundles, so every such pair must verify: no moment at which an admission could fail.
 */
interface Options {
  readonly config: RotationConfig;
  readonly stepMs: number;
  readonly replicaLagsMs: readonly number[];
  readonly reportFingerprints: boolean;
  /** Steps until a patch of each webhook takes effect (and is observed); one when not given. */
  readonly webhookLagSteps?: readonly number[];
  /** Steps (by index) at which a Secret is lost or damaged before the planner runs. */
  readonly disruptions?: ReadonlyMap<number, Disruption>;
  readonly issue?: IssueFn;
}

type Disruption = 'delete-ca' | 'corrupt-ca' | 'delete-serving' | 'corrupt-serving';

interface Outcome {
  readonly steps: number;
  readonly admissionFailures: string[];
  readonly planProblems: string[];
  readonly reasons: Map<ChangeReason, number>;
}

function simulate(options: Options, durationMs: number): Outcome {
  const { config, stepMs } = options;
  let world: World = emptyWorld();
  const pending: { name: string; effectiveAt: number; caBundle: string }[] = [];
  const webhookLag = new Map(world.webhooks.map((w, i) => [w.name, options.webhookLagSteps?.[i] ?? 1]));
  const leaves: { writtenAt: number; pem: string }[] = [];
  const admissionFailures: string[] = [];
  const planProblems: string[] = [];
  const reasons = new Map<ChangeReason, number>();
  const servedAt = (lag: number, t: number) => leaves.filter((l) => l.writtenAt <= t - lag).at(-1)?.pem;

  let step = 0;
  for (let t = T0.getTime(); t <= T0.getTime() + durationMs; t += stepMs, step++) {
    const now = new Date(t);
    // Patches due by now take effect, in order, at unknown instants since the previous step: any
    // bundle a webhook held in between may have met any leaf served in between.
    const heldSincePreviousStep = new Map(world.webhooks.map((w) => [w.name, [w.caBundle ?? '']]));
    const due = pending.filter((p) => p.effectiveAt <= step);
    pending.splice(0, pending.length, ...pending.filter((p) => p.effectiveAt > step));
    for (const patch of due) heldSincePreviousStep.get(patch.name)?.push(patch.caBundle);
    world = { ...world, webhooks: world.webhooks.map((w) => ({ name: w.name, caBundle: heldSincePreviousStep.get(w.name)?.at(-1) ?? w.caBundle })) };

    for (const lag of options.replicaLagsMs) {
      // Served at some point in [previous step, now): the old or the new caBundle may be in effect.
      const during = [servedAt(lag, t - stepMs), ...leaves.filter((l) => l.writtenAt + lag > t - stepMs && l.writtenAt + lag < t).map((l) => l.pem)];
      // Served now, after the due patches took effect.
      const atNow = servedAt(lag, t);
      for (const webhook of world.webhooks) {
        const held = heldSincePreviousStep.get(webhook.name) ?? [];
        const pairs: [string | undefined, string][] = [
          ...during.flatMap((leaf) => held.map((bundle): [string | undefined, string] => [leaf, bundle])),
          [atNow, webhook.caBundle ?? ''],
        ];
        for (const [leaf, bundle] of pairs) {
          // An empty caBundle is the moment before the first install published one: nothing to break yet.
          if (leaf !== undefined && bundle !== '' && !admits(leaf, bundle, now)) {
            admissionFailures.push(`${now.toISOString()} replica (lag ${lag / MINUTE} min) vs ${webhook.name}`);
          }
        }
      }
    }

    world = disrupt(world, options.disruptions?.get(step));
    const fingerprints = options.reportFingerprints
      ? options.replicaLagsMs.map((lag) => servedAt(lag, t)).filter((p): p is string => p !== undefined).map((p) => x509(p).fingerprint256)
      : undefined;
    const plan = planRotation(inputFor(world, now, config, { servingFingerprints: fingerprints }), options.issue);
    planProblems.push(...checkPlan(plan, now, config));

    for (const action of plan.actions) {
      for (const change of action.changes) reasons.set(change.reason, (reasons.get(change.reason) ?? 0) + 1);
      if (action.kind === 'write-ca-secret') world = { ...world, caSecret: action.secret };
      else if (action.kind === 'write-serving-secret') {
        const pem = action.secret.data[SERVING_SECRET_KEYS.cert];
        if (world.servingSecret?.data[SERVING_SECRET_KEYS.cert] !== pem || leaves.length === 0) leaves.push({ writtenAt: t, pem });
        world = { ...world, servingSecret: action.secret };
      } else pending.push({ name: action.name, effectiveAt: step + (webhookLag.get(action.name) ?? 1), caBundle: action.caBundle });
    }
  }
  return { steps: step, admissionFailures, planProblems, reasons };
}

/** What the API server's TLS client checks: the leaf and a CA of the bundle that signed it are valid now. */
function admits(leafPem: string, bundle: string, now: Date): boolean {
  const leaf = x509(leafPem);
  if (!validAt(leaf, now)) return false;
  return splitPemBundle(bundle).some((pem) => {
    const ca = x509(pem);
    return validAt(ca, now) && signs(ca, leaf);
  });
}

// The checker sees the same certificates at every step; parse and verify each pair once.
const parsedPems = new Map<string, X509Certificate>();
const signatures = new Map<string, boolean>();
function x509(pem: string): X509Certificate {
  const key = pem.replace(/\r\n/g, '\n');
  let cert = parsedPems.get(key);
  if (!cert) parsedPems.set(key, (cert = new X509Certificate(pem)));
  return cert;
}
function signs(ca: X509Certificate, leaf: X509Certificate): boolean {
  const key = `${ca.fingerprint256} ${leaf.fingerprint256}`;
  let verdict = signatures.get(key);
  if (verdict === undefined) signatures.set(key, (verdict = leaf.checkIssued(ca) && leaf.verify(ca.publicKey)));
  return verdict;
}

function validAt(cert: X509Certificate, now: Date): boolean {
  return new Date(cert.validFrom).getTime() <= now.getTime() && now.getTime() < new Date(cert.validTo).getTime();
}

/** Properties every single plan must have, whatever happened before. */
function checkPlan(plan: RotationPlan, now: Date, config: RotationConfig): string[] {
  const at = now.toISOString();
  const problems: string[] = [];
  const leaf = x509(plan.desired.servingSecret.data['tls.crt']);
  const signer = x509(plan.desired.caSecret.data['ca.crt']);
  if (new Date(leaf.validTo) > new Date(signer.validTo) && leaf.checkIssued(signer)) problems.push(`${at}: leaf outlives its CA`);
  if (!admits(plan.desired.servingSecret.data['tls.crt'], plan.desired.caBundle, now)) problems.push(`${at}: desired leaf not trusted by desired bundle`);
  if (plan.desired.servingSecret.data['ca.crt'] !== plan.desired.caBundle) problems.push(`${at}: serving ca.crt differs from the bundle`);
  const delay = plan.nextRunAt.getTime() - now.getTime();
  if (!(delay > 0 && delay <= config.recheckMs)) problems.push(`${at}: next run in ${delay} ms`);
  for (const action of plan.actions) if (action.changes.length === 0) problems.push(`${at}: ${action.kind} without a reason`);
  return problems;
}

function disrupt(world: World, disruption: Disruption | undefined): World {
  switch (disruption) {
    case 'delete-ca':
      return { ...world, caSecret: undefined };
    case 'corrupt-ca':
      return world.caSecret ? { ...world, caSecret: { data: { ...world.caSecret.data, 'ca.crt': 'garbage' } } } : world;
    case 'delete-serving':
      return { ...world, servingSecret: undefined };
    case 'corrupt-serving':
      return world.servingSecret ? { ...world, servingSecret: { ...world.servingSecret, data: { ...world.servingSecret.data, 'tls.key': 'garbage' } } } : world;
    default:
      return world;
  }
}

/** 1024-bit keys keep the many generated certificates cheap; the planner does not care about the size. */
const quickIssue: IssueFn = (request: CertificateRequest) => issueKeyPair({ ...request, keyBits: 1024 });

const config = testConfig(); // CA 10 h, leaf 3 h, settle 10 min, recheck 1 min
const threeCaLifetimes = 30 * HOUR;

describe('rotation over a simulated timeline', () => {
  it('never leaves a moment at which the served leaf fails against a published caBundle (settle delay)', () => {
    const outcome = simulate({ config, stepMs: 10 * MINUTE, replicaLagsMs: [0, 2 * MINUTE, 10 * MINUTE], reportFingerprints: false }, threeCaLifetimes);
    expect(outcome.admissionFailures).toEqual([]);
    expect(outcome.planProblems).toEqual([]);
    // The timeline really went through several complete rotations.
    expect(defined(outcome.reasons.get('CaStaged'))).toBeGreaterThanOrEqual(3);
    expect(defined(outcome.reasons.get('SignerSwitched'))).toBe(outcome.reasons.get('CaStaged'));
    expect(defined(outcome.reasons.get('CaDropped'))).toBeGreaterThanOrEqual(3);
    expect(defined(outcome.reasons.get('LeafRenewed'))).toBeGreaterThanOrEqual(9);
    expect(outcome.reasons.get('LeafReplaced')).toBeUndefined();
  }, 60_000);

  it('never breaks when the injectors report the leaf they serve', () => {
    const outcome = simulate(
      { config, stepMs: 5 * MINUTE, replicaLagsMs: [MINUTE, 7 * MINUTE], webhookLagSteps: [1, 3], reportFingerprints: true, issue: quickIssue },
      threeCaLifetimes,
    );
    expect(outcome.admissionFailures).toEqual([]);
    expect(outcome.planProblems).toEqual([]);
    expect(defined(outcome.reasons.get('CaDropped'))).toBeGreaterThanOrEqual(3);
  }, 60_000);

  it('holds for any step size, replica lag up to the settle delay, slow webhooks and lost or damaged Secrets', () => {
    const disruption = fc.constantFrom<Disruption>('delete-ca', 'corrupt-ca', 'delete-serving', 'corrupt-serving');
    fc.assert(
      fc.property(
        fc.integer({ min: 2, max: 10 }),
        fc.array(fc.integer({ min: 0, max: 10 }), { minLength: 1, maxLength: 3 }),
        fc.tuple(fc.integer({ min: 1, max: 3 }), fc.integer({ min: 1, max: 3 })),
        fc.boolean(),
        fc.array(fc.tuple(fc.integer({ min: 0, max: 150 }), disruption), { maxLength: 6 }),
        (stepMinutes, lagMinutes, webhookLagSteps, reportFingerprints, events) => {
          // Disruptions come at least 4 steps apart, i.e. after the slowest webhook took the previous
          // repair: losing the serving Secret while the webhooks do not yet trust a CA recreated from
          // scratch is an outage no planner can prevent (the old CA's key is gone).
          let at = 0;
          const disruptions = new Map(events.map(([gap, what]): [number, Disruption] => [(at += 4 + gap), what]));
          const outcome = simulate(
            {
              config,
              stepMs: stepMinutes * MINUTE,
              replicaLagsMs: lagMinutes.map((m) => m * MINUTE),
              webhookLagSteps,
              reportFingerprints,
              disruptions,
              issue: quickIssue,
            },
            threeCaLifetimes,
          );
          expect(outcome.admissionFailures).toEqual([]);
          expect(outcome.planProblems).toEqual([]);
        },
      ),
      { numRuns: 20, seed: 20270301 },
    );
  }, 120_000);
});
