import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { envField, leaseSettings, parseEnv, serviceEnv } from './env.js';

const schema = z.object({
  PORT: envField.port(8443),
  RESYNC: envField.duration('5m'),
  SETTLE: envField.optionalDuration(),
  LEADER_ELECT: envField.bool(true),
  EXTRA_DNS_NAMES: envField.list(),
});

describe('parseEnv', () => {
  it('applies defaults when nothing is set', () => {
    expect(parseEnv(schema, {})).toEqual({ PORT: 8443, RESYNC: 300_000, SETTLE: undefined, LEADER_ELECT: true, EXTRA_DNS_NAMES: [] });
  });

  it('coerces the strings the environment holds', () => {
    const env = { PORT: '9443', RESYNC: '500ms', SETTLE: '1h30m', LEADER_ELECT: '0', EXTRA_DNS_NAMES: ' a.example , ,b.example' };
    expect(parseEnv(schema, env)).toEqual({ PORT: 9443, RESYNC: 500, SETTLE: 5_400_000, LEADER_ELECT: false, EXTRA_DNS_NAMES: ['a.example', 'b.example'] });
  });

  it('reports every bad variable at once, each by name', () => {
    const env = { PORT: '70000', RESYNC: '300', LEADER_ELECT: 'yes' };
    const message = (() => {
      try {
        parseEnv(schema, env);
        return 'no error';
      } catch (e) {
        return (e as Error).message;
      }
    })();
    expect(message).toMatch(/^invalid configuration:/);
    expect(message).toMatch(/PORT: /);
    expect(message).toMatch(/RESYNC: "300" is not a duration: use a number with a unit/);
    expect(message).toMatch(/LEADER_ELECT: /);
    expect(message).not.toMatch(/EXTRA_DNS_NAMES/);
  });

  it('rejects a port that is not an integer', () => {
    expect(() => parseEnv(schema, { PORT: '80.5' })).toThrow(/PORT/);
  });
});

describe('serviceEnv and leaseSettings', () => {
  const shared = z.object(serviceEnv({ leaseName: 'outrigger-x', namespace: 'outrigger-system' }));

  it('derives renew deadline and retry period from the lease duration, as client-go does', () => {
    expect(leaseSettings(parseEnv(shared, {}))).toEqual({ name: 'outrigger-x', namespace: 'outrigger-system', leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 });
    expect(leaseSettings(parseEnv(shared, { LEASE_DURATION: '3s', POD_NAME: 'x-1', LEASE_NAMESPACE: 'leases' }))).toEqual({
      name: 'outrigger-x',
      namespace: 'leases',
      identity: 'x-1',
      leaseDurationMs: 3_000,
      renewDeadlineMs: 2_000,
      retryPeriodMs: 400,
    });
    expect(leaseSettings(parseEnv(shared, { LEASE_RENEW_DEADLINE: '8s', LEASE_RETRY_PERIOD: '1s' }))).toMatchObject({ renewDeadlineMs: 8_000, retryPeriodMs: 1_000 });
  });

  it('requires the namespace when a service has no default for it', () => {
    expect(() => parseEnv(z.object(serviceEnv({ leaseName: 'l' })), {})).toThrow(/POD_NAMESPACE: the install namespace is required/);
  });
});
