import { describe as suite, expect, it } from 'vitest';
import { issueKeyPair } from './rotation-plan.js';
import { describe, formatDuration } from './rotation-messages.js';
import { HOUR, T0 } from './test-support.js';

suite('rotation messages', () => {
  it('name a certificate by subject, short fingerprint and expiry', () => {
    const { cert } = issueKeyPair({ commonName: 'messages-ca', usage: 'ca', lifetimeMs: HOUR, now: T0 });
    expect(describe(cert)).toBe(`CN=messages-ca (sha256 ${cert.fingerprint256.slice(0, 11)}, until ${new Date(T0.getTime() + HOUR).toISOString()})`);
  });

  it('format durations with their two largest units', () => {
    expect(formatDuration(90 * 60_000)).toBe('1h30m');
    expect(formatDuration(3 * 86_400_000 + 5 * 60_000)).toBe('3d5m');
    expect(formatDuration(0)).toBe('0s');
    expect(formatDuration(-61_000)).toBe('-1m1s');
  });
});
