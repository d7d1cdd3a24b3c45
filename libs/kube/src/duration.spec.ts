import { describe, expect, it } from 'vitest';
import { parseDuration } from './duration.js';

describe('parseDuration', () => {
  it('reads single and combined units', () => {
    expect(parseDuration('90d')).toBe(90 * 86_400_000);
    expect(parseDuration('1h30m')).toBe(5_400_000);
    expect(parseDuration('45s')).toBe(45_000);
    expect(parseDuration('500ms')).toBe(500);
    expect(parseDuration('1.5m')).toBe(90_000);
  });

  it('rejects bare numbers, unknown units and garbage with a clear message', () => {
    for (const bad of ['', '10', '5y', '1h 30m', 'abc', '-1s']) {
      expect(() => parseDuration(bad)).toThrow(/is not a duration: use a number with a unit/);
    }
  });
});
