/** One sample of a Prometheus text exposition, with its label values. */
export interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;
const UNESCAPE: Record<string, string> = { n: '\n', '\\': '\\', '"': '"' };

/**
 * The samples of a text exposition (tools/observability's parseExposition keeps only names and label
 * names), with escaped label values decoded. `families` keeps only samples whose name starts with one of them.
 */
export function parseSamples(text: string, families: readonly string[] = []): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line.startsWith('#') || (families.length > 0 && !families.some((f) => line.startsWith(f)))) continue;
    const match = SAMPLE.exec(line);
    if (!match) continue;
    const labels: Record<string, string> = {};
    for (const [, key, raw] of (match[2] ?? '').matchAll(LABEL)) labels[key as string] = (raw as string).replace(/\\(.)/g, (_, c: string) => UNESCAPE[c] ?? c);
    samples.push({ name: match[1] as string, labels, value: Number(match[3]) });
  }
  return samples;
}

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
