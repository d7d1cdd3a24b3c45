import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { envField } from './env.js';
import { parseServiceEnv, settingProblems } from './strict-settings.js';

const KNOWN = new Set(['PORT', 'GRACE', 'FILE_POLL', 'LEASE_DURATION', 'LEASE_RENEW_DEADLINE', 'LOG_LEVEL', 'LOG_FORMAT', 'POD_NAME', 'POD_NAMESPACE', 'KUBECONFIG', 'WEBHOOK_SERVICE_PORT']);

describe('settingProblems', () => {
  it('refuses a retired name, naming its replacement and the value with its unit', () => {
    expect(settingProblems(KNOWN, { GRACE_SECONDS: '60' })).toEqual(['  GRACE_SECONDS: retired; set GRACE=60s instead (a duration with its unit)']);
    expect(settingProblems(KNOWN, { FILE_POLL_SECONDS: 'x', LEASE_DURATION_SECONDS: '15' })).toEqual([
      '  FILE_POLL_SECONDS: retired; set FILE_POLL instead (a duration with its unit)',
      '  LEASE_DURATION_SECONDS: retired; set LEASE_DURATION=15s instead (a duration with its unit)',
    ]);
  });

  it.each([
    ['GRACE_MS', 'GRACE'],
    ['LEASE_RENEW', 'LEASE_RENEW_DEADLINE'],
    ['LOG_LEVLE', 'LOG_LEVEL'],
    ['LOG_LEVELS', 'LOG_LEVEL'],
    ['KUBE_CONFIG', 'KUBECONFIG'],
    ['POD_NAMESPAC', 'POD_NAMESPACE'],
  ])('refuses %s, which looks like %s', (name, like) => {
    expect(settingProblems(KNOWN, { [name]: 'x' })).toEqual([`  ${name}: not a setting of this service (did you mean ${like}?)`]);
  });

  it('leaves a container environment alone: process variables, Node, Kubernetes service links, downward API idioms', () => {
    const env = {
      PATH: '/usr/bin',
      HOME: '/home/node',
      HOSTNAME: 'outrigger-injector-7d9c',
      TZ: 'UTC',
      LANG: 'C.UTF-8',
      LC_ALL: 'C',
      TERM: 'xterm',
      NODE_OPTIONS: '--v8-pool-size=1',
      NODE_VERSION: '24.21.0',
      NODE_ENV: 'production',
      npm_config_cache: '/tmp',
      YARN_VERSION: '1.22.22',
      KUBERNETES_SERVICE_HOST: '10.96.0.1',
      KUBERNETES_PORT_443_TCP_ADDR: '10.96.0.1',
      // Service links of Services that happen to share a setting's words.
      GRACE_SERVICE_HOST: '10.96.0.7',
      GRACE_PORT: 'tcp://10.96.0.7:80',
      LOG_LEVEL_SERVICE_PORT_HTTP: '80',
      OUTRIGGER_INJECTOR_PORT_443_TCP_PROTO: 'tcp',
      PORT_PORT_8080_TCP: 'tcp://10.96.0.9:8080',
      MY_POD_NAME: 'x',
      POD_IP: '10.244.0.5',
      LEASE: 'unrelated',
      HTTPS_PROXY: 'http://proxy:3128',
    };
    expect(settingProblems(KNOWN, env)).toEqual([]);
  });

  it("leaves a retired name alone in a service that never had it (the cert-manager has no GRACE)", () => {
    expect(settingProblems(new Set(['PORT']), { GRACE_SECONDS: '60' })).toEqual([]);
  });
});

describe('parseServiceEnv', () => {
  const schema = z.object({ PORT: envField.port(8080), GRACE: envField.duration('60s') });

  it('knows the logging settings every service reads', () => {
    expect(parseServiceEnv(schema, { LOG_LEVEL: 'debug', LOG_FORMAT: 'text', GRACE: '5s' })).toEqual({ PORT: 8080, GRACE: 5_000 });
  });

  it('reports a refused name with the schema’s own problems, each by name', () => {
    expect(() => parseServiceEnv(schema, { GRACE_SECONDS: '30', PORT: 'x' })).toThrow(
      /^invalid configuration:\n {2}PORT: .*\n {2}GRACE_SECONDS: retired; set GRACE=30s instead/,
    );
  });
});
