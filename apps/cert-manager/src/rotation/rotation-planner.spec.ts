import { issueCertificate, parseCertificate, verifiesAgainst } from '@outrigger/pki';
import { beforeAll, describe, expect, it } from 'vitest';
import type { RotationPlan } from './rotation-plan.js';
import { planRotation } from './rotation-planner.js';
import { CA_SECRET_KEYS, SERVING_ANNOTATIONS, SERVING_SECRET_KEYS } from './secret-layout.js';
import {
  HOUR,
  MINUTE,
  T0,
  WEBHOOKS,
  type World,
  after,
  apply,
  bundleFingerprints,
  defined,
  emptyWorld,
  fingerprint,
  inputFor,
  kinds,
  reasons,
  recordingIssuer,
  run,
  testConfig,
} from './test-support.js';

const config = testConfig();
const plan = (world: World, now: Date, extra = {}) => planRotation(inputFor(world, now, config, extra));

const caCert = (w: World) => w.caSecret?.data[CA_SECRET_KEYS.cert] ?? '';
const leafCert = (w: World) => w.servingSecret?.data[SERVING_SECRET_KEYS.cert] ?? '';
const webhookBundles = (w: World) => w.webhooks.map((h) => bundleFingerprints(h.caBundle));

function expectServedLeafTrustedEverywhere(w: World): void {
  for (const webhook of w.webhooks) expect(verifiesAgainst(leafCert(w), webhook.caBundle ?? '')).toBe(true);
  expect(verifiesAgainst(leafCert(w), w.servingSecret?.data[SERVING_SECRET_KEYS.bundle] ?? '')).toBe(true);
}

// Installed at T0, then run every 10 minutes: leaves are renewed at 2 h, 4 h and 6 h; the CA is due at 6 h 38 min.
let installed: World;
let beforeStaging: World;
beforeAll(() => {
  installed = apply(emptyWorld(), plan(emptyWorld(), T0));
  beforeStaging = run(installed, config, after(10 * MINUTE), after(6 * HOUR + 30 * MINUTE), 10 * MINUTE);
});

describe('planRotation: steady state', () => {
  it('first install: creates a CA, a leaf signed by it, and publishes the bundle everywhere', () => {
    const issue = recordingIssuer();
    const p = planRotation(inputFor(emptyWorld(), T0, config), issue);
    expect(kinds(p)).toEqual(['write-ca-secret', 'write-serving-secret', 'patch-webhook', 'patch-webhook']);
    expect(reasons(p)).toEqual(['CaCreated', 'LeafIssued', 'BundlePublished', 'BundlePublished']);
    expect(issue.requests.map((r) => r.usage)).toEqual(['ca', 'server']);
    expect(p.phase).toBe('Steady');

    const ca = p.desired.caSecret.data;
    expect(Object.keys(ca).sort()).toEqual(['ca-bundle.crt', 'ca.crt', 'ca.key']);
    expect(parseCertificate(ca['ca.crt'])?.isCa).toBe(true);
    expect(bundleFingerprints(p.desired.caBundle)).toEqual([fingerprint(ca['ca.crt'])]);

    const serving = p.desired.servingSecret;
    expect(serving.data['ca.crt']).toBe(p.desired.caBundle);
    expect(verifiesAgainst(serving.data['tls.crt'], ca['ca.crt'])).toBe(true);
    expect(serving.annotations?.[SERVING_ANNOTATIONS.leafSince]).toBe(T0.toISOString());
    expect(serving.annotations?.[SERVING_ANNOTATIONS.leafSha256]).toBe(fingerprint(serving.data['tls.crt']));
    const leaf = parseCertificate(serving.data['tls.crt']);
    expect(leaf?.dnsNames).toEqual(
      ['injector', 'injector.outrigger-system', 'injector.outrigger-system.svc', 'injector.outrigger-system.svc.cluster.local'].sort(),
    );
    expect(leaf?.notAfter.getTime()).toBe(after(3 * HOUR).getTime());
    for (const action of p.actions) if (action.kind === 'patch-webhook') expect(action.caBundle).toBe(p.desired.caBundle);
  });

  it('does nothing, and generates no key, when everything is in place', () => {
    const issue = recordingIssuer();
    const p = planRotation(inputFor(installed, after(30 * MINUTE), config), issue);
    expect(p.actions).toEqual([]);
    expect(p.waiting).toEqual([]);
    expect(p.phase).toBe('Steady');
    expect(issue.requests).toHaveLength(0);
    expect(p.desired.caSecret).toEqual(installed.caSecret);
    expect(p.desired.servingSecret).toEqual(installed.servingSecret);
  });

  it('renews the leaf once less than a third of its life is left, from the same CA, without touching the bundle', () => {
    // The leaf lives from T0-5m (back-dated) to T0+3h: a third of 3h05m is left at T0+1h58m20s.
    expect(plan(installed, after(HOUR + 58 * MINUTE)).actions).toEqual([]);
    const p = plan(installed, after(HOUR + 59 * MINUTE));
    expect(kinds(p)).toEqual(['write-serving-secret']);
    expect(reasons(p)).toEqual(['LeafRenewed']);
    expect(p.actions[0].changes[0].message).toMatch(/left/);
    const next = apply(installed, p);
    expect(leafCert(next)).not.toBe(leafCert(installed));
    expect(verifiesAgainst(leafCert(next), caCert(installed))).toBe(true);
    expect(next.caSecret).toBe(installed.caSecret);
    expect(next.servingSecret?.annotations?.[SERVING_ANNOTATIONS.leafSince]).toBe(after(HOUR + 59 * MINUTE).toISOString());
  });

  it('replaces a lost serving Secret with a leaf from the current CA and leaves the bundle alone', () => {
    const p = plan({ ...installed, servingSecret: undefined }, after(HOUR));
    expect(kinds(p)).toEqual(['write-serving-secret']);
    expect(reasons(p)).toEqual(['LeafReplaced']);
    expect(p.actions[0].changes[0].message).toMatch(/serving Secret is missing/);
    const next = apply({ ...installed, servingSecret: undefined }, p);
    expect(verifiesAgainst(leafCert(next), caCert(installed))).toBe(true);
    expect(next.servingSecret?.data['ca.crt']).toBe(installed.servingSecret?.data['ca.crt']);
  });

  it('replaces a leaf whose key does not match, or that no known CA signed', () => {
    const serving = defined(installed.servingSecret);
    const otherKey = issueCertificate({ commonName: 'x', usage: 'ca', lifetimeMs: HOUR, now: T0 }).key;
    const mismatched = plan({ ...installed, servingSecret: { ...serving, data: { ...serving.data, 'tls.key': otherKey } } }, after(HOUR));
    expect(reasons(mismatched)).toEqual(['LeafReplaced']);
    expect(mismatched.actions[0].changes[0].message).toMatch(/does not match/);

    const foreignCa = issueCertificate({ commonName: 'foreign', usage: 'ca', lifetimeMs: 10 * HOUR, now: T0 });
    const foreignLeaf = issueCertificate({ commonName: 'x', usage: 'server', issuer: foreignCa, lifetimeMs: 2 * HOUR, now: T0 });
    const foreign = plan({ ...installed, servingSecret: { ...serving, data: { ...serving.data, 'tls.crt': foreignLeaf.cert, 'tls.key': foreignLeaf.key } } }, after(HOUR));
    expect(reasons(foreign)).toEqual(['LeafReplaced']);
    expect(foreign.actions[0].changes[0].message).toMatch(/none of the known CAs/);
    expect(verifiesAgainst(foreign.desired.servingSecret.data['tls.crt'], caCert(installed))).toBe(true);
  });

  it('reissues the leaf when the configured names change, then settles', () => {
    const changed = testConfig({ extraDnsNames: ['injector.example.com'], ipAddresses: ['10.0.0.10', '0:0:0:0:0:0:0:1'] });
    const p = planRotation(inputFor(installed, after(HOUR), changed));
    expect(reasons(p)).toEqual(['LeafRenewed']);
    expect(p.actions[0].changes[0].message).toMatch(/names .* differ from the configured/);
    const leaf = parseCertificate(p.desired.servingSecret.data['tls.crt']);
    expect(leaf && { dnsNames: leaf.dnsNames, ipAddresses: leaf.ipAddresses }).toEqual({
      dnsNames: expect.arrayContaining(['injector.example.com', 'injector.outrigger-system.svc']) as string[],
      ipAddresses: ['10.0.0.10', '::1'],
    });
    expect(planRotation(inputFor(apply(installed, p), after(HOUR + MINUTE), changed)).actions).toEqual([]);
  });

  it('patches only the webhook whose caBundle drifted', () => {
    const foreignCa = issueCertificate({ commonName: 'foreign', usage: 'ca', lifetimeMs: HOUR, now: T0 });
    const drifted = { ...installed, webhooks: [installed.webhooks[0], { name: WEBHOOKS[1], caBundle: foreignCa.cert }] };
    const p = plan(drifted, after(HOUR));
    expect(kinds(p)).toEqual(['patch-webhook']);
    expect(p.actions[0]).toMatchObject({ name: WEBHOOKS[1], caBundle: p.desired.caBundle });
    expect(reasons(p)).toEqual(['WebhookDriftFixed']);
    expect(p.actions[0].changes[0].message).toMatch(/removes CN=foreign/);

    const garbled = plan({ ...installed, webhooks: [{ name: WEBHOOKS[0], caBundle: '-----BEGIN CERTIFICATE-----\nnope\n-----END CERTIFICATE-----\n' }, installed.webhooks[1]] }, after(HOUR));
    expect(garbled.actions).toMatchObject([{ kind: 'patch-webhook', name: WEBHOOKS[0] }]);
    const emptied = plan({ ...installed, webhooks: [{ name: WEBHOOKS[0] }, installed.webhooks[1]] }, after(HOUR));
    expect(reasons(emptied)).toEqual(['BundlePublished']);
  });

  it('ignores the order and spelling of a caBundle that holds the right CAs', () => {
    const crlf = (caCert(installed) ?? '').replace(/\n/g, '\r\n');
    const p = plan({ ...installed, webhooks: installed.webhooks.map((w) => ({ ...w, caBundle: crlf })) }, after(HOUR));
    expect(p.actions).toEqual([]);
  });

  it('never issues a leaf that outlives its CA, and does not churn a leaf cut short by its CA', () => {
    const long = testConfig({ leafLifetimeMs: 10 * HOUR });
    const issue = recordingIssuer();
    const first = planRotation(inputFor(emptyWorld(), T0, long), issue);
    const ca = defined(parseCertificate(first.desired.caSecret.data['ca.crt']));
    const leaf = defined(parseCertificate(first.desired.servingSecret.data['tls.crt']));
    expect(leaf.notAfter.getTime()).toBe(ca.notAfter.getTime());
    expect(issue.requests[1].lifetimeMs).toBeLessThanOrEqual(ca.notAfter.getTime() - T0.getTime());

    // At 6 h 40 min both are due; the CA is staged, but a new leaf from the same CA would end no later.
    const world = apply(emptyWorld(), first);
    const p = planRotation(inputFor(world, after(6 * HOUR + 40 * MINUTE), long));
    expect(reasons(p)).not.toContain('LeafRenewed');
    expect(reasons(p)).toContain('CaStaged');
    expect(p.desired.servingSecret.data['tls.crt']).toBe(leafCert(world));
  });
});

describe('planRotation: staged CA rotation', () => {
  const stagedAt = after(6 * HOUR + 40 * MINUTE);
  let stagePlan: RotationPlan;
  let staged: World;
  beforeAll(() => {
    stagePlan = plan(beforeStaging, stagedAt);
    staged = apply(beforeStaging, stagePlan);
  });

  it('stages a new CA when the signer has less than a third of its life left: bundle old+new, leaf unchanged', () => {
    expect(plan(beforeStaging, after(6 * HOUR + 38 * MINUTE)).actions).toEqual([]);
    expect(kinds(stagePlan)).toEqual(['write-ca-secret', 'write-serving-secret', 'patch-webhook', 'patch-webhook']);
    expect(reasons(stagePlan)).toEqual(['CaStaged', 'BundlePublished', 'BundlePublished', 'BundlePublished']);
    expect(stagePlan.phase).toBe('Staged');
    const ca = defined(staged.caSecret).data;
    expect(ca['ca.crt']).toBe(caCert(beforeStaging));
    expect(parseCertificate(ca['ca-next.crt'])?.isCa).toBe(true);
    expect(bundleFingerprints(ca['ca-bundle.crt'])).toEqual([fingerprint(ca['ca.crt']), fingerprint(ca['ca-next.crt'])]);
    expect(staged.servingSecret?.data['ca.crt']).toBe(ca['ca-bundle.crt']);
    expect(leafCert(staged)).toBe(leafCert(beforeStaging));
    expect(webhookBundles(staged)).toEqual([bundleFingerprints(ca['ca-bundle.crt']), bundleFingerprints(ca['ca-bundle.crt'])]);
  });

  it('does not switch the signer while any webhook lacks the staged CA', () => {
    const secretsOnly = apply(beforeStaging, stagePlan, { webhooks: false });
    const none = plan(secretsOnly, after(10 * MINUTE, stagedAt));
    expect(kinds(none)).toEqual(['patch-webhook', 'patch-webhook']);
    expect(none.phase).toBe('Staged');
    expect(none.waiting.join()).toMatch(/not yet in the caBundle of .*inject\.outrigger\.dev, .*fallback/);

    const half = { ...secretsOnly, webhooks: [staged.webhooks[0], secretsOnly.webhooks[1]] };
    const p = plan(half, after(10 * MINUTE, stagedAt));
    expect(reasons(p)).not.toContain('SignerSwitched');
    expect(p.actions).toMatchObject([{ kind: 'patch-webhook', name: WEBHOOKS[1] }]);
    expect(p.desired.servingSecret.data['tls.crt']).toBe(leafCert(staged));
  });

  it('renews a due leaf from the old signer while the new CA is only staged', () => {
    // Leaf from 6 h is due at 7 h 58 min; webhooks never confirmed the staged CA.
    const secretsOnly = apply(beforeStaging, stagePlan, { webhooks: false });
    const p = plan(secretsOnly, after(8 * HOUR));
    expect(reasons(p)).toContain('LeafRenewed');
    expect(verifiesAgainst(p.desired.servingSecret.data['tls.crt'], caCert(beforeStaging))).toBe(true);
    expect(p.desired.caSecret.data['ca-next.crt']).toBe(staged.caSecret?.data['ca-next.crt']);
  });

  describe('once every webhook trusts the staged CA', () => {
    const switchedAt = after(10 * MINUTE, stagedAt);
    let switchPlan: RotationPlan;
    let switched: World;
    beforeAll(() => {
      switchPlan = plan(staged, switchedAt);
      switched = apply(staged, switchPlan);
    });

    it('switches the signer: a new leaf from the new CA, bundle still old+new', () => {
      expect(kinds(switchPlan)).toEqual(['write-ca-secret', 'write-serving-secret']);
      expect(reasons(switchPlan)).toEqual(['SignerSwitched', 'LeafRenewed']);
      expect(switchPlan.phase).toBe('Draining');
      const ca = defined(switched.caSecret).data;
      expect(ca['ca.crt']).toBe(staged.caSecret?.data['ca-next.crt']);
      expect(ca['ca-next.crt']).toBeUndefined();
      expect(bundleFingerprints(ca['ca-bundle.crt']).sort()).toEqual(bundleFingerprints(staged.caSecret?.data['ca-bundle.crt']).sort());
      expect(verifiesAgainst(leafCert(switched), ca['ca.crt'])).toBe(true);
      expect(verifiesAgainst(leafCert(switched), caCert(staged))).toBe(false);
      expectServedLeafTrustedEverywhere(switched);
      expect(switchPlan.waiting.join()).toMatch(/Keeping .* published until the injectors have reloaded/);
    });

    it('drops the old CA only after the settle delay', () => {
      expect(plan(switched, after(9 * MINUTE, switchedAt)).actions).toEqual([]);
      const p = plan(switched, after(10 * MINUTE, switchedAt));
      expect(kinds(p)).toEqual(['write-ca-secret', 'write-serving-secret', 'patch-webhook', 'patch-webhook']);
      expect(reasons(p)[0]).toBe('CaDropped');
      expect(p.phase).toBe('Steady');
      expect(bundleFingerprints(p.desired.caBundle)).toEqual([fingerprint(caCert(switched))]);
      const done = apply(switched, p);
      expectServedLeafTrustedEverywhere(done);
      expect(plan(done, after(11 * MINUTE, switchedAt)).actions).toEqual([]);
    });

    it('drops the old CA as soon as every injector reports serving the new leaf, not while one still serves the old', () => {
      const current = fingerprint(leafCert(switched));
      const old = fingerprint(leafCert(staged));
      const early = plan(switched, after(MINUTE, switchedAt), { servingFingerprints: [current, current.replace(/:/g, '').toLowerCase()] });
      expect(reasons(early)[0]).toBe('CaDropped');
      expect(early.actions[0].changes[0].message).toMatch(/report serving the current leaf/);
      const stale = plan(switched, after(HOUR, switchedAt), { servingFingerprints: [current, old] });
      expect(stale.actions).toEqual([]);
      expect(stale.waiting.join()).toMatch(/1 of 2 still serve another/);
    });

    it('next run is the settle deadline when that comes first', () => {
      const slow = testConfig({ recheckMs: 24 * HOUR });
      const p = planRotation(inputFor(switched, after(MINUTE, switchedAt), slow));
      expect(p.nextRunAt).toEqual(after(10 * MINUTE, switchedAt));
    });
  });

  it('promotes the staged CA without confirmation once the signer has expired', () => {
    // The webhooks never took the staged CA and the old CA ran out: nothing left to protect.
    const secretsOnly = apply(beforeStaging, stagePlan, { webhooks: false });
    const p = plan(secretsOnly, after(10 * HOUR + MINUTE));
    expect(reasons(p)).toEqual(expect.arrayContaining(['SignerForced', 'LeafReplaced']));
    expect(p.desired.caSecret.data['ca.crt']).toBe(staged.caSecret?.data['ca-next.crt']);
    expect(verifiesAgainst(p.desired.servingSecret.data['tls.crt'], p.desired.caSecret.data['ca.crt'])).toBe(true);
  });

  it('discards a corrupt staged CA and stages a fresh one', () => {
    const ca = defined(staged.caSecret);
    const p = plan({ ...staged, caSecret: { data: { ...ca.data, 'ca-next.key': 'garbage' } } }, after(MINUTE, stagedAt));
    expect(reasons(p).slice(0, 2)).toEqual(['StagedCaDiscarded', 'CaStaged']);
    expect(p.desired.caSecret.data['ca-next.crt']).not.toBe(ca.data['ca-next.crt']);
    expect(p.phase).toBe('Staged');
  });
});

describe('planRotation: recovery', () => {
  it('recreates a corrupt CA Secret, keeps the old CA while the leaf depends on it, then rotates without a gap', () => {
    const corrupt: World = { ...installed, caSecret: { data: { 'ca.crt': 'not a certificate', 'ca.key': 'nor a key' } } };
    const t1 = after(HOUR);
    const p1 = plan(corrupt, t1);
    expect(reasons(p1)).toEqual(['CaRecovered', 'CaRetained', 'BundlePublished', 'BundlePublished', 'BundlePublished']);
    expect(p1.actions[0].changes[0].message).toMatch(/ca\.crt does not parse/);
    expect(p1.phase).toBe('Switching');
    expect(p1.desired.servingSecret.data['tls.crt']).toBe(leafCert(installed));
    const newCa = p1.desired.caSecret.data['ca.crt'];
    expect(bundleFingerprints(p1.desired.caBundle)).toEqual([fingerprint(newCa), fingerprint(caCert(installed))]);

    // Secrets written, webhooks not yet: the leaf stays.
    const halfway = apply(corrupt, p1, { webhooks: false });
    expect(plan(halfway, after(MINUTE, t1)).desired.servingSecret.data['tls.crt']).toBe(leafCert(installed));

    const w1 = apply(corrupt, p1);
    expectServedLeafTrustedEverywhere(w1);
    const p2 = plan(w1, after(MINUTE, t1));
    expect(reasons(p2)).toEqual(['LeafRenewed']);
    expect(p2.phase).toBe('Draining');
    const w2 = apply(w1, p2);
    expect(verifiesAgainst(leafCert(w2), newCa)).toBe(true);
    expectServedLeafTrustedEverywhere(w2);

    const p3 = plan(w2, after(11 * MINUTE, t1));
    expect(reasons(p3)[0]).toBe('CaDropped');
    const w3 = apply(w2, p3);
    expect(bundleFingerprints(w3.servingSecret?.data['ca.crt'])).toEqual([fingerprint(newCa)]);
    expectServedLeafTrustedEverywhere(w3);
  });

  it('recreates a deleted CA Secret from what the serving Secret trusts', () => {
    const p = plan({ ...installed, caSecret: undefined }, after(HOUR));
    expect(reasons(p).slice(0, 2)).toEqual(['CaRecovered', 'CaRetained']);
    expect(p.actions[0].changes[0].message).toMatch(/it is missing/);
    expect(bundleFingerprints(p.desired.caBundle)).toContain(fingerprint(caCert(installed)));
  });

  it('takes the old CA from the serving Secret even when no webhook holds it any more', () => {
    const p = plan({ ...installed, caSecret: undefined, webhooks: [{ name: WEBHOOKS[0] }, { name: WEBHOOKS[1], caBundle: 'garbage' }] }, after(HOUR));
    expect(bundleFingerprints(p.desired.caBundle)).toContain(fingerprint(caCert(installed)));
    expect(p.desired.servingSecret.data['tls.crt']).toBe(leafCert(installed));
  });

  it('keeps a CA whose key was lost but whose certificate still verifies the leaf', () => {
    const ca = defined(installed.caSecret);
    const p = plan({ ...installed, caSecret: { data: { ...ca.data, 'ca.key': 'lost', 'ca-bundle.crt': 'garbage' } } }, after(HOUR));
    expect(p.actions[0].changes[0].message).toMatch(/ca\.key does not match/);
    expect(bundleFingerprints(p.desired.caBundle)).toContain(fingerprint(caCert(installed)));
    expect(p.desired.servingSecret.data['tls.crt']).toBe(leafCert(installed));
  });

  it('with both Secrets lost, keeps what the webhooks trust until the injectors have settled on the new leaf', () => {
    const lost: World = { webhooks: installed.webhooks };
    const p = plan(lost, after(HOUR));
    expect(reasons(p)).toEqual(expect.arrayContaining(['CaRecovered', 'CaRetained', 'LeafReplaced']));
    expect(bundleFingerprints(p.desired.caBundle)).toContain(fingerprint(caCert(installed)));
    const w = apply(lost, p);
    expect(bundleFingerprints(plan(w, after(HOUR + 9 * MINUTE)).desired.caBundle)).toHaveLength(2);
    expect(bundleFingerprints(plan(w, after(HOUR + 10 * MINUTE)).desired.caBundle)).toHaveLength(1);
  });

  it('records when it first saw a leaf it did not write, and waits the settle delay from then', () => {
    const serving = defined(installed.servingSecret);
    const p = plan({ ...installed, servingSecret: { data: serving.data } }, after(HOUR));
    expect(reasons(p)).toEqual(['LeafObserved']);
    expect(p.desired.servingSecret.annotations?.[SERVING_ANNOTATIONS.leafSince]).toBe(after(HOUR).toISOString());
  });
});

describe('planRotation: convergence', () => {
  it('reaches a fixed point within three applications at a fixed moment, whatever the start', () => {
    const starts: [string, World, Date][] = [
      ['nothing', emptyWorld(), T0],
      ['installed', installed, after(HOUR)],
      ['CA due', beforeStaging, after(6 * HOUR + 40 * MINUTE)],
      ['CA Secret lost', { ...installed, caSecret: undefined }, after(HOUR)],
      ['both Secrets lost', { webhooks: installed.webhooks }, after(HOUR)],
    ];
    for (const [name, start, now] of starts) {
      let world = start;
      const counts: number[] = [];
      for (let i = 0; i < 4; i++) {
        const p = plan(world, now);
        counts.push(p.actions.length);
        world = apply(world, p);
      }
      expect(counts.slice(3), name).toEqual([0]);
    }
  });
});

describe('planRotation: next run', () => {
  it('is capped by the recheck period', () => {
    expect(plan(installed, after(HOUR)).nextRunAt).toEqual(after(HOUR + MINUTE));
  });

  it('is the earliest threshold when the recheck period is long', () => {
    const slow = testConfig({ recheckMs: 24 * HOUR });
    const leaf = defined(parseCertificate(leafCert(installed)));
    const leafDue = leaf.notAfter.getTime() - (leaf.notAfter.getTime() - leaf.notBefore.getTime()) / 3;
    expect(planRotation(inputFor(installed, after(HOUR), slow)).nextRunAt.getTime()).toBe(leafDue);
    // Once the leaf from 6 h is in place, the CA's staging point (6 h 38 min) comes first.
    const ca = defined(parseCertificate(caCert(beforeStaging)));
    const caDue = ca.notAfter.getTime() - (ca.notAfter.getTime() - ca.notBefore.getTime()) / 3;
    expect(planRotation(inputFor(beforeStaging, after(6 * HOUR + 30 * MINUTE), slow)).nextRunAt.getTime()).toBe(caDue);
  });

  it('falls back to the recheck period while waiting on something already due', () => {
    const slow = testConfig({ recheckMs: 2 * HOUR });
    const staged = apply(beforeStaging, plan(beforeStaging, after(6 * HOUR + 40 * MINUTE)), { webhooks: false });
    const p = planRotation(inputFor(staged, after(6 * HOUR + 50 * MINUTE), slow));
    expect(p.nextRunAt.getTime()).toBeGreaterThan(after(6 * HOUR + 50 * MINUTE).getTime());
    expect(p.nextRunAt.getTime()).toBeLessThanOrEqual(after(8 * HOUR + 50 * MINUTE).getTime());
  });
});
