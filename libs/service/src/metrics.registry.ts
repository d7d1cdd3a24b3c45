import { collectDefaultMetrics, Gauge, Registry } from 'prom-client';

/**
 * One registry per service, injected where metrics are recorded (never the prom-client global).
 * No default labels: the metric prefix names the service, and `service`, `job`, `instance`,
 * `namespace`, `pod`, `container` and `endpoint` are Prometheus's target labels.
 */
export function createMetricsRegistry(): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return registry;
}

export interface OptionalGaugeOptions {
  readonly name: string;
  readonly help: string;
  readonly registry: Registry;
  /** Read at scrape time; undefined while unknown. */
  readonly value: () => number | undefined;
}

/** A label-free gauge with no sample while its value is unknown (prom-client's own reads 0 then). */
export function optionalGauge(options: OptionalGaugeOptions): Gauge {
  const gauge: Gauge = new Gauge({
    name: options.name,
    help: options.help,
    registers: [options.registry],
    collect: () => {
      const value = options.value();
      if (value === undefined) gauge.remove({});
      else gauge.set(value);
    },
  });
  return gauge;
}

/**
 * `<prefix>_build_info{version} 1`, Prometheus's convention for which build a target runs: a query
 * joins it to any other series, and an upgrade left half done shows as two versions at once.
 */
export function buildInfo(registry: Registry, prefix: string, version: string): Gauge<'version'> {
  const gauge = new Gauge({ name: `${prefix}_build_info`, help: 'Always 1; its version label is the build this process runs.', labelNames: ['version'], registers: [registry] });
  gauge.set({ version }, 1);
  return gauge;
}
