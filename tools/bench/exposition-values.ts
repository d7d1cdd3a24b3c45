import type { Sample } from '../observability/exposition.js';

/** A histogram's observation count and sum of the series that carry `match`'s labels, summed. */
export interface HistogramTotal {
  readonly count: number;
  readonly sum: number;
}

export function histogramTotal(samples: readonly Sample[], family: string, match: Readonly<Record<string, string>> = {}): HistogramTotal {
  const matches = (s: Sample) => Object.entries(match).every(([k, v]) => s.labels[k] === v);
  const total = (name: string) => samples.filter((s) => s.name === name && matches(s)).reduce((acc, s) => acc + s.value, 0);
  return { count: total(`${family}_count`), sum: total(`${family}_sum`) };
}

/** What was observed between two scrapes of the same counters. */
export function histogramDelta(after: HistogramTotal, before: HistogramTotal): HistogramTotal {
  return { count: after.count - before.count, sum: after.sum - before.sum };
}
