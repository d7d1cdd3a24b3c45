import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { envField, parseEnv } from './env.js';

const schema = z.object({
  PORT: envField.port(8443),
  RESYNC_SECONDS: envField.seconds(300),
  LEADER_ELECT: envField.bool(true),
  EXTRA_DNS_NAMES: envField.list(),
});

describe('parseEnv', () => {
  it('applies defaults when nothing is set', () => {
    expect(parseEnv(schema, {})).toEqual({ PORT: 8443, RESYNC_SECONDS: 300, LEADER_ELECT: true, EXTRA_DNS_NAMES: [] });
  });

  it('coerces the strings the environment holds', () => {
    const env = { PORT: '9443', RESYNC_SECONDS: '0.5', LEADER_ELECT: '0', EXTRA_DNS_NAMES: ' a.example , ,b.example' };
    expect(parseEnv(schema, env)).toEqual({ PORT: 9443, RESYNC_SECONDS: 0.5, LEADER_ELECT: false, EXTRA_DNS_NAMES: ['a.example', 'b.example'] });
  });

  it('reports every bad variable at once, each by name', () => {
    const env = { PORT: '70000', RESYNC_SECONDS: '-1', LEADER_ELECT: 'yes' };
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
    expect(message).toMatch(/RESYNC_SECONDS: /);
    expect(message).toMatch(/LEADER_ELECT: /);
    expect(message).not.toMatch(/EXTRA_DNS_NAMES/);
  });

  it('rejects a port that is not an integer', () => {
    expect(() => parseEnv(schema, { PORT: '80.5' })).toThrow(/PORT/);
  });
});
