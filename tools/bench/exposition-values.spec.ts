import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseSamples } from '../observability/exposition.js';
import { histogramDelta, histogramTotal } from './exposition-values.js';

// A scrape of the API server's webhook histogram, plus escaped label values and an untyped sample.
const text = readFileSync(new URL('../observability/fixtures/exposition.prom', import.meta.url), 'utf8');

describe('histogramTotal', () => {
  it('sums count and sum over the series carrying the labels', () => {
    const samples = parseSamples(text);
    const family = 'apiserver_admission_webhook_admission_duration_seconds';
    expect(histogramTotal(samples, family, { name: 'inject.outrigger.dev', rejected: 'false' })).toEqual({ count: 4, sum: 0.012 });
    expect(histogramTotal(samples, family, { name: 'inject.outrigger.dev' })).toEqual({ count: 5, sum: 0.512 });
    expect(histogramTotal(samples, family, { name: 'absent' })).toEqual({ count: 0, sum: 0 });
  });

  it('subtracts an earlier scrape', () => {
    expect(histogramDelta({ count: 10, sum: 0.5 }, { count: 4, sum: 0.25 })).toEqual({ count: 6, sum: 0.25 });
  });
});
