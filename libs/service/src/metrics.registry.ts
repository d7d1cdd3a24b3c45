import { collectDefaultMetrics, Registry } from 'prom-client';

/** One registry per service, injected where metrics are recorded (never the prom-client global). */
export function createMetricsRegistry(service: string): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  collectDefaultMetrics({ register: registry });
  return registry;
}
