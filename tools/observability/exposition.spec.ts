import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseExposition, parseSamples, sampleNames } from './exposition.ts';

// A scrape of the API server's webhook histogram, plus escaped label values and an untyped sample.
const text = readFileSync(new URL('./fixtures/exposition.prom', import.meta.url), 'utf8');

describe('parseSamples', () => {
  it('reads every sample with its decoded label values', () => {
    const samples = parseSamples(text);
    expect(samples).toHaveLength(9);
    expect(samples.find((s) => s.name === 'some_counter')).toEqual({ name: 'some_counter', labels: { path: 'a "quoted" \\ value, with } and =', code: '200' }, value: 1500 });
    expect(samples.at(-1)).toEqual({ name: 'untyped', labels: {}, value: 7 });
  });

  it('keeps only the families asked for', () => {
    expect(parseSamples(text, ['untyped', 'some_']).map((s) => s.name)).toEqual(['some_counter', 'untyped']);
  });
});

describe('parseExposition', () => {
  it("gives each family's type and the sample names it exports", () => {
    const { types, samples } = parseExposition(text);
    expect([...types]).toEqual([['apiserver_admission_webhook_admission_duration_seconds', 'histogram']]);
    expect([...sampleNames(types)].sort()).toEqual(['_bucket', '_count', '_sum'].map((s) => `apiserver_admission_webhook_admission_duration_seconds${s}`));
    expect(samples).toEqual(parseSamples(text));
  });
});
