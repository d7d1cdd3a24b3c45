import { describe, expect, it } from 'vitest';
import { metricsSnapshot } from './metrics-snapshot.js';
import { planRotation } from './rotation-planner.js';
import { HOUR, MINUTE, T0, after, apply, emptyWorld, inputFor, observe, testConfig } from './test-support.js';

describe('metricsSnapshot', () => {
  it('reports seconds until the CA and the leaf expire', () => {
    const world = apply(emptyWorld(), planRotation(inputFor(emptyWorld(), T0, testConfig())));
    expect(metricsSnapshot({ now: after(HOUR), ...observe(world) })).toEqual({
      caExpirySeconds: 9 * 3600,
      stagedCaExpirySeconds: null,
      leafExpirySeconds: 2 * 3600,
      bundleCaCount: 1,
    });
  });

  it('reports the staged CA and a bundle of two during a rotation, negative seconds once expired', () => {
    const config = testConfig();
    const installed = apply(emptyWorld(), planRotation(inputFor(emptyWorld(), T0, config)));
    const staged = apply(installed, planRotation(inputFor(installed, after(7 * HOUR), config)));
    const m = metricsSnapshot({ now: after(7 * HOUR), ...observe(staged) });
    expect(m.stagedCaExpirySeconds).toBe(10 * 3600);
    expect(m.bundleCaCount).toBe(2);
    expect(metricsSnapshot({ now: after(11 * HOUR + MINUTE), caSecret: observe(installed).caSecret }).caExpirySeconds).toBe(-3600 - 60);
  });

  it('reports null for what is missing', () => {
    expect(metricsSnapshot({ now: T0 })).toEqual({ caExpirySeconds: null, stagedCaExpirySeconds: null, leafExpirySeconds: null, bundleCaCount: 0 });
  });
});
