import { describe, expect, it } from 'vitest';
import { histogramDelta, histogramTotal, parseSamples } from './exposition-values.js';

const text = `# HELP apiserver_admission_webhook_admission_duration_seconds [STABLE] Admission webhook latency
# TYPE apiserver_admission_webhook_admission_duration_seconds histogram
apiserver_admission_webhook_admission_duration_seconds_bucket{name="inject.outrigger.dev",operation="CREATE",rejected="false",type="admit",le="0.005"} 3
apiserver_admission_webhook_admission_duration_seconds_sum{name="inject.outrigger.dev",operation="CREATE",rejected="false",type="admit"} 0.012
apiserver_admission_webhook_admission_duration_seconds_count{name="inject.outrigger.dev",operation="CREATE",rejected="false",type="admit"} 4
apiserver_admission_webhook_admission_duration_seconds_sum{name="inject.outrigger.dev",operation="CREATE",rejected="true",type="admit"} 0.5
apiserver_admission_webhook_admission_duration_seconds_count{name="inject.outrigger.dev",operation="CREATE",rejected="true",type="admit"} 1
apiserver_admission_webhook_admission_duration_seconds_sum{name="peer.example.com",operation="CREATE",rejected="false",type="admit"} 0.02
apiserver_admission_webhook_admission_duration_seconds_count{name="peer.example.com",operation="CREATE",rejected="false",type="admit"} 2
some_counter{path="a \\"quoted\\" \\\\ value, with } and =",code="200"} 1.5e+03
untyped 7
`;

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
