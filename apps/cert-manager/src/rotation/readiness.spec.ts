import { issueCertificate } from '@outrigger/pki';
import { describe, expect, it } from 'vitest';
import { readiness } from './readiness.js';
import { planRotation } from './rotation-planner.js';
import { HOUR, MINUTE, T0, WEBHOOKS, type World, after, apply, emptyWorld, inputFor, observe, testConfig } from './test-support.js';

const world = apply(emptyWorld(), planRotation(inputFor(emptyWorld(), T0, testConfig())));
const observed = observe(world);
const base = { now: after(MINUTE), servingSecret: observed.servingSecret, webhooks: observed.webhooks, minValidityMs: HOUR };
/** The readiness input for `world` with the serving Secret or the webhooks as given (as stored). */
const stored = (changes: Partial<World>) => {
  const { servingSecret, webhooks } = observe({ ...world, ...changes });
  return { servingSecret, webhooks };
};

describe('readiness', () => {
  it('is ready when the leaf is valid long enough and every webhook trusts it', () => {
    expect(readiness(base)).toEqual({ ready: true, reasons: [] });
  });

  it('is not ready without a serving Secret or with an unreadable leaf', () => {
    expect(readiness({ ...base, servingSecret: undefined })).toEqual({ ready: false, reasons: ['the serving Secret is missing'] });
    expect(readiness({ ...base, ...stored({ servingSecret: { data: { 'tls.crt': 'x' } } }) }).reasons).toEqual(['tls.crt is missing or does not parse']);
    expect(readiness({ ...base, ...stored({ servingSecret: { data: {} } }) }).reasons).toEqual(['tls.crt is missing or does not parse']);
  });

  it('is not ready when the leaf expires within the window', () => {
    // The 3 h leaf from T0 has less than an hour left at T0+2h30m.
    const r = readiness({ ...base, now: after(2 * HOUR + 30 * MINUTE) });
    expect(r.ready).toBe(false);
    expect(r.reasons.join()).toMatch(/expires before/);
  });

  it('by default judges the leaf by its own lifetime, not by this pod\'s settings', () => {
    // A 3 h leaf (3 h 5 min with back-dating) issued at T0: a tenth of its life is ~18 min.
    const { minValidityMs: _, ...unset } = base;
    expect(readiness({ ...unset, now: after(2 * HOUR + 30 * MINUTE) }).ready).toBe(true);
    expect(readiness({ ...unset, now: after(2 * HOUR + 50 * MINUTE) }).reasons.join()).toMatch(/expires before/);
  });

  it('names each webhook that does not trust the leaf', () => {
    const other = issueCertificate({ commonName: 'other', usage: 'ca', lifetimeMs: HOUR, now: T0 });
    const r = readiness({ ...base, ...stored({ webhooks: [{ name: WEBHOOKS[0], caBundle: other.cert }, { name: WEBHOOKS[1] }] }) });
    expect(r).toEqual({
      ready: false,
      reasons: [`the leaf does not verify against the caBundle of ${WEBHOOKS[0]}`, `${WEBHOOKS[1]} has no caBundle`],
    });
  });

  it('is not ready when the key does not match', () => {
    const serving = world.servingSecret ?? { data: {} };
    const r = readiness({ ...base, ...stored({ servingSecret: { data: { ...serving.data, 'tls.key': 'nope' } } }) });
    expect(r.reasons).toEqual(['tls.key is missing or does not match tls.crt']);
  });
});
