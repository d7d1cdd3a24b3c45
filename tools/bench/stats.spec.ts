import { describe, expect, it } from 'vitest';
import { median, noiseFloor, quantile, spread } from './stats.js';

describe('quantile', () => {
  it('takes the nearest rank, so the result is always a sample', () => {
    const samples = Array.from({ length: 100 }, (_, i) => 100 - i);
    expect(quantile(samples, 0.5)).toBe(50);
    expect(quantile(samples, 0.99)).toBe(99);
    expect(quantile(samples, 1)).toBe(100);
    expect(quantile(samples, 0)).toBe(1);
    expect(quantile([7, 3, 5], 0.5)).toBe(5);
  });

  it('is NaN without samples', () => {
    expect(quantile([], 0.5)).toBeNaN();
  });
});

describe('median and spread', () => {
  it('averages the middle pair of an even count', () => {
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([3, 1, 2])).toBe(2);
    expect(median([])).toBeNaN();
  });

  it('gives the median with the range', () => {
    expect(spread([1.2, 0.8, 1.0])).toEqual({ median: 1.0, min: 0.8, max: 1.2 });
  });
});

describe('noiseFloor', () => {
  it('is the twin ratio\'s distance from 1 or half its per-round interquartile range, whichever is wider', () => {
    expect(noiseFloor(1, [1, 1, 1, 1])).toBe(0);
    expect(noiseFloor(1.2, [1, 1, 1, 1])).toBeCloseTo(0.2);
    // Nearest-rank quartiles of four rounds: 0.6 and 1.1.
    expect(noiseFloor(1, [0.6, 0.9, 1.1, 1.4])).toBeCloseTo(0.25);
    expect(noiseFloor(0.7, [0.6, 0.9, 1.1, 1.4])).toBeCloseTo(0.3);
  });
});
