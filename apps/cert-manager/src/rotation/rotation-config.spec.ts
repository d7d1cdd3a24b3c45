import { describe, expect, it } from 'vitest';
import { ROTATION_DEFAULTS, resolveRotationConfig, servingCommonName, servingDnsNames } from './rotation-config.js';

describe('resolveRotationConfig', () => {
  it('fills in the documented defaults', () => {
    const config = resolveRotationConfig({ serviceName: 'injector', namespace: 'outrigger-system' });
    expect(config).toEqual({ serviceName: 'injector', namespace: 'outrigger-system', ...ROTATION_DEFAULTS });
    expect(config.caLifetimeMs).toBe(365 * 86_400_000);
    expect(config.leafLifetimeMs).toBe(90 * 86_400_000);
    expect(config.keyBits).toBe(2048);
    expect(config.renewBeforeFraction).toBeCloseTo(1 / 3);
    // In normal operation a fresh leaf fits in the time a CA has left when it is staged.
    expect(config.leafLifetimeMs).toBeLessThan(config.caLifetimeMs * config.renewBeforeFraction);
  });

  it('ignores explicitly undefined fields', () => {
    expect(resolveRotationConfig({ serviceName: 'a', namespace: 'b', keyBits: undefined }).keyBits).toBe(2048);
  });

  it('reports every problem at once', () => {
    const attempt = () =>
      resolveRotationConfig({
        serviceName: 'Not_A_Label',
        namespace: 'ns',
        ipAddresses: ['300.1.1.1'],
        extraDnsNames: ['bad name'],
        leafLifetimeMs: 10,
        caLifetimeMs: 5,
        renewBeforeFraction: 1,
        keyBits: 1024,
        recheckMs: 0,
        settleMs: -1,
      });
    expect(attempt).toThrow(/serviceName: .*; ipAddresses: "300\.1\.1\.1" is not an IP address/);
    for (const fragment of ['extraDnsNames: "bad name"', 'recheckMs: ', 'settleMs: ', 'leafLifetimeMs: must not exceed the CA lifetime', 'renewBeforeFraction: ', 'keyBits: ']) {
      expect(attempt).toThrow(fragment);
    }
  });
});

describe('serving names', () => {
  it('lists the four Service names, then the extra ones, without duplicates', () => {
    const config = resolveRotationConfig({
      serviceName: 'injector',
      namespace: 'outrigger-system',
      clusterDomain: 'cluster.example',
      extraDnsNames: ['injector.example.com', 'injector'],
    });
    expect(servingDnsNames(config)).toEqual([
      'injector',
      'injector.outrigger-system',
      'injector.outrigger-system.svc',
      'injector.outrigger-system.svc.cluster.example',
      'injector.example.com',
    ]);
    expect(servingCommonName(config)).toBe('injector.outrigger-system.svc');
  });
});
