import type { ReflectorStatus } from '@outrigger/kube';
import { Counter, Gauge, type Registry } from 'prom-client';

/** What one watch reports at scrape time (read from its reflector, never copied). */
export type WatchSample = Pick<ReflectorStatus, 'restarts' | 'lastSyncAt'>;

/** The watches of one source, by the resource name its metrics carry. */
export type WatchSource = () => Readonly<Record<string, WatchSample>>;

/**
 * `<prefix>_watch_restarts_total{resource}` and `<prefix>_last_sync_timestamp_seconds{resource}`,
 * read from every observed source at scrape time: the same two series for each service, so that
 * one alert reads them all.
 */
export class WatchMetrics {
  private readonly sources: WatchSource[] = [];

  constructor(registry: Registry, prefix: string) {
    const samples = () => this.sources.flatMap((source) => Object.entries(source()));
    // Arrow functions: prom-client calls collect() with the metric as `this`.
    const restarts: Counter<'resource'> = new Counter({
      name: `${prefix}_watch_restarts_total`,
      help: 'List/watch restarts after errors, per watched resource.',
      labelNames: ['resource'],
      registers: [registry],
      collect: () => {
        restarts.reset();
        for (const [resource, s] of samples()) restarts.inc({ resource }, s.restarts);
      },
    });
    const lastSync: Gauge<'resource'> = new Gauge({
      name: `${prefix}_last_sync_timestamp_seconds`,
      help: 'Last complete list of each watched resource.',
      labelNames: ['resource'],
      registers: [registry],
      collect: () => {
        lastSync.reset();
        for (const [resource, s] of samples()) if (s.lastSyncAt) lastSync.set({ resource }, s.lastSyncAt.getTime() / 1000);
      },
    });
  }

  /** Adds a source read at every scrape. */
  observe(source: WatchSource): void {
    this.sources.push(source);
  }
}
