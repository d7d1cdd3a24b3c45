import { describe, expect, it } from 'vitest';
import { parseTimeout } from './rollout.command.js';

describe('parseTimeout', () => {
  it('takes a duration as the services do', () => {
    expect(parseTimeout('90s')).toBe(90_000);
    expect(parseTimeout('10m')).toBe(600_000);
    expect(parseTimeout('1h30m')).toBe(5_400_000);
    expect(parseTimeout('1.5m')).toBe(90_000);
  });

  it('refuses what is not a duration, naming the flag', () => {
    for (const bad of ['10', '', '-1m', 'soon']) expect(() => parseTimeout(bad)).toThrow(/^--timeout: .* is not a duration: use a number with a unit/);
  });

  it('refuses zero', () => {
    expect(() => parseTimeout('0s')).toThrow(/^--timeout must be above 0/);
  });
});
