import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { WatchMetrics } from './watch-metrics.js';

const samples = async (registry: Registry, name: string) => (await registry.metrics()).split('\n').filter((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `));

describe('WatchMetrics', () => {
  it('declares both series before any watch is observed', async () => {
    const registry = new Registry();
    new WatchMetrics(registry, 'test');
    const text = await registry.metrics();
    expect(text).toMatch(/^# TYPE test_watch_restarts_total counter$/m);
    expect(text).toMatch(/^# TYPE test_last_sync_timestamp_seconds gauge$/m);
    expect(await samples(registry, 'test_watch_restarts_total')).toEqual([]);
  });

  it('reads every source at each scrape: restarts from 0, the last list only once there was one, a watch gone is no longer reported', async () => {
    const registry = new Registry();
    const metrics = new WatchMetrics(registry, 'test');
    let namespaces = { restarts: 3, lastSyncAt: new Date(1_700_000_000_000) as Date | undefined };
    let secret: Record<string, { restarts: number }> = { 'secret tls': { restarts: 0 } };
    metrics.observe(() => ({ pods: { restarts: 0 }, namespaces }));
    metrics.observe(() => secret);
    expect(await samples(registry, 'test_watch_restarts_total')).toEqual([
      'test_watch_restarts_total{resource="pods"} 0',
      'test_watch_restarts_total{resource="namespaces"} 3',
      'test_watch_restarts_total{resource="secret tls"} 0',
    ]);
    expect(await samples(registry, 'test_last_sync_timestamp_seconds')).toEqual(['test_last_sync_timestamp_seconds{resource="namespaces"} 1700000000']);

    namespaces = { restarts: 4, lastSyncAt: undefined };
    secret = {};
    expect(await samples(registry, 'test_watch_restarts_total')).toEqual(['test_watch_restarts_total{resource="pods"} 0', 'test_watch_restarts_total{resource="namespaces"} 4']);
    expect(await samples(registry, 'test_last_sync_timestamp_seconds')).toEqual([]);
  });
});
