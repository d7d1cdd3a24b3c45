import { describe, expect, it } from 'vitest';
import { buildInfo, createMetricsRegistry, optionalGauge } from './metrics.registry.js';

const TARGET_LABELS = ['service', 'job', 'instance', 'namespace', 'pod', 'container', 'endpoint'];

describe('createMetricsRegistry', () => {
  it('exports the process metrics with no label Prometheus sets on targets', async () => {
    const text = await createMetricsRegistry().metrics();
    expect(text).toMatch(/^process_cpu_seconds_total /m);
    const labels = [...text.matchAll(/^[a-z_:]+\{([^}]*)\}/gm)].flatMap((m) => [...m[1].matchAll(/([a-zA-Z_]+)="/g)].map((l) => l[1]));
    expect(labels.filter((l) => TARGET_LABELS.includes(l))).toEqual([]);
  });
});

describe('optionalGauge', () => {
  it('has no sample while unknown, the value once known, and none again when unknown', async () => {
    const registry = createMetricsRegistry();
    let value: number | undefined;
    optionalGauge({ registry, name: 'test_expiry_timestamp_seconds', help: 'h', value: () => value });
    const sample = async () => (await registry.metrics()).match(/^test_expiry_timestamp_seconds.*$/m)?.[0];
    expect(await sample()).toBeUndefined();
    value = 1_800_000_000;
    expect(await sample()).toBe('test_expiry_timestamp_seconds 1800000000');
    value = undefined;
    expect(await sample()).toBeUndefined();
  });
});

describe('buildInfo', () => {
  it('exports one sample of 1 labelled with the version', async () => {
    const registry = createMetricsRegistry();
    buildInfo(registry, 'test', '1.2.0+3f2a9c1d0b7e');
    const text = await registry.metrics();
    expect(text.match(/^test_build_info.*$/gm)).toEqual(['test_build_info{version="1.2.0+3f2a9c1d0b7e"} 1']);
    expect(text).toContain('# TYPE test_build_info gauge');
  });
});
