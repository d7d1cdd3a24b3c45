/** The q-quantile (0 ≤ q ≤ 1) of samples, nearest rank: always one of the samples, as histograms report. */
export function quantile(samples: readonly number[], q: number): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil(q * sorted.length)));
  return sorted[rank - 1] as number;
}

/** The median, averaging the two middle values of an even count. */
export function median(samples: readonly number[]): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/** The median of several rounds' figures with their range: how a noisy machine's results are given. */
export interface Spread {
  readonly median: number;
  readonly min: number;
  readonly max: number;
}

export function spread(values: readonly number[]): Spread {
  return { median: median(values), min: Math.min(...values), max: Math.max(...values) };
}

/**
 * How far two equal servers' ratio lands from 1 in a run: the larger of its distance from 1 (the
 * ratio of their medians) and half the interquartile range of its per-round values. A verdict is
 * decided only when its own distance from the target is wider than this.
 */
export function noiseFloor(twinRatio: number, twinPerRound: readonly number[]): number {
  return Math.max(Math.abs(twinRatio - 1), (quantile(twinPerRound, 0.75) - quantile(twinPerRound, 0.25)) / 2);
}
