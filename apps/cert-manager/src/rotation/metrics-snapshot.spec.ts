import { describe, expect, it } from 'vitest';
import { metricsSnapshot } from './metrics-snapshot.js';
import { planRotation } from './rotation-planner.js';
import { HOUR, T0, after, apply, emptyWorld, inputFor, observe, testConfig } from './test-support.js';

const unix = (at: Date) => at.getTime() / 1000;

describe('metricsSnapshot', () => {
  it('reports when the CA and the leaf expire, as Unix seconds', () => {
    const world = apply(emptyWorld(), planRotation(inputFor(emptyWorld(), T0, testConfig())));
    expect(metricsSnapshot(observe(world))).toEqual({
      caExpiry: unix(after(10 * HOUR)),
      stagedCaExpiry: null,
      leafExpiry: unix(after(3 * HOUR)),
      bundleCaCount: 1,
    });
  });

  it('reports the staged CA and a bundle of two during a rotation', () => {
    const config = testConfig();
    const installed = apply(emptyWorld(), planRotation(inputFor(emptyWorld(), T0, config)));
    const staged = apply(installed, planRotation(inputFor(installed, after(7 * HOUR), config)));
    const m = metricsSnapshot(observe(staged));
    expect(m.stagedCaExpiry).toBe(unix(after(17 * HOUR)));
    expect(m.caExpiry).toBe(unix(after(10 * HOUR)));
    expect(m.bundleCaCount).toBe(2);
  });

  it('reports null for what is missing', () => {
    expect(metricsSnapshot({})).toEqual({ caExpiry: null, stagedCaExpiry: null, leafExpiry: null, bundleCaCount: 0 });
  });
});
