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
 * The samples of a text exposition, with escaped label values decoded. `families` keeps only
 * samples whose name starts with one of them.
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

/** A Prometheus text exposition: each family's type, and its samples. */
export interface Exposition {
  readonly types: ReadonlyMap<string, string>;
  readonly samples: readonly Sample[];
}

export function parseExposition(text: string): Exposition {
  const types = new Map<string, string>();
  for (const [, name, type] of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) types.set(name ?? '', type ?? '');
  return { types, samples: parseSamples(text) };
}

/** The sample names a family exports: histograms and summaries add their suffixes. */
export function sampleNames(types: ReadonlyMap<string, string>): Set<string> {
  const suffixes: Record<string, string[]> = { histogram: ['_bucket', '_sum', '_count'], summary: ['', '_sum', '_count'] };
  return new Set([...types].flatMap(([name, type]) => (suffixes[type] ?? ['']).map((s) => name + s)));
}
