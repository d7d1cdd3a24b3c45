import { createMetricsRegistry } from '@outrigger/service';
import { describe, expect, it } from 'vitest';
import { CertManagerMetrics } from './cert-manager.metrics.js';

const samples = async (registry: ReturnType<typeof createMetricsRegistry>) =>
  (await registry.metrics()).split('\n').filter((l) => /^outrigger_cert_manager_(ca|staged_ca|leaf)_expiry|^outrigger_cert_manager_bundle_cas/.test(l));

describe('CertManagerMetrics', () => {
  it('exports no expiry before the first observation, and no staged CA outside a rotation', async () => {
    const registry = createMetricsRegistry();
    const metrics = new CertManagerMetrics(registry);
    expect(await samples(registry)).toEqual([]);
    metrics.observe({ caExpiry: 1_900_000_000, stagedCaExpiry: null, leafExpiry: 1_800_000_000, bundleCaCount: 1 });
    expect(await samples(registry)).toEqual([
      'outrigger_cert_manager_ca_expiry_timestamp_seconds 1900000000',
      'outrigger_cert_manager_leaf_expiry_timestamp_seconds 1800000000',
      'outrigger_cert_manager_bundle_cas 1',
    ]);
    metrics.observe({ caExpiry: 1_900_000_000, stagedCaExpiry: 1_950_000_000, leafExpiry: null, bundleCaCount: 2 });
    expect(await samples(registry)).toEqual([
      'outrigger_cert_manager_ca_expiry_timestamp_seconds 1900000000',
      'outrigger_cert_manager_staged_ca_expiry_timestamp_seconds 1950000000',
      'outrigger_cert_manager_bundle_cas 2',
    ]);
  });
});
