import { describe, expect, it } from 'vitest';
import { parseTimeout } from './rollout.command.js';

describe('parseTimeout', () => {
  it('takes a whole number of seconds, minutes or hours', () => {
    expect(parseTimeout('90s')).toBe(90_000);
    expect(parseTimeout('10m')).toBe(600_000);
    expect(parseTimeout('1h')).toBe(3_600_000);
  });

  it('refuses a bare number, another unit, zero or a fraction, naming the flag', () => {
    for (const bad of ['10', '5d', '0s', '1.5m', '', '-1m']) expect(() => parseTimeout(bad)).toThrow(/^--timeout must be a whole number of s, m or h above 0/);
  });
});
