import { describe, expect, it } from 'vitest';
import { canonicalQuantity } from './canonical-quantity.js';

describe('canonicalQuantity', () => {
  // Pairs as kube-apiserver stores them in a resource list (verify-injected-agent.e2e.ts asks it).
  it.each([
    ['0.5', '500m'],
    ['0.1', '100m'],
    ['1.1', '1100m'],
    ['1000m', '1'],
    ['1500m', '1500m'],
    ['100m', '100m'],
    ['1000', '1k'],
    ['1500', '1500'],
    ['12000', '12k'],
    ['1000k', '1M'],
    ['128974848', '128974848'],
    ['1e3', '1e3'],
    ['10e2', '1e3'],
    ['1e2', '100'],
    ['1E3', '1e3'],
    ['1024Mi', '1Gi'],
    ['1.5Gi', '1536Mi'],
    ['2048Ki', '2Mi'],
    ['512Ki', '512Ki'],
    ['0.5Ki', '512'],
    ['1Ki', '1Ki'],
    ['0', '0'],
    ['0m', '0'],
    ['0.0000000001', '1m'],
    ['100u', '1m'],
    ['1.0001', '1001m'],
    ['5n', '1m'],
    ['.5', '500m'],
    ['5.', '5'],
    ['+2', '2'],
    ['1E', '1E'],
    ['2000P', '2E'],
  ])('%s is stored as %s', (given, stored) => {
    expect(canonicalQuantity(given)).toBe(stored);
  });

  it('reads a number as its JSON text, as the API server reads an unquoted quantity', () => {
    expect(canonicalQuantity(0.5)).toBe('500m');
    expect(canonicalQuantity(2)).toBe('2');
    expect(canonicalQuantity(1000)).toBe('1k');
  });

  it('is undefined for what is not a quantity', () => {
    for (const value of ['', 'abc', '1 Gi', '1Gb', '--1', null, true, {}]) expect(canonicalQuantity(value)).toBeUndefined();
  });
});
