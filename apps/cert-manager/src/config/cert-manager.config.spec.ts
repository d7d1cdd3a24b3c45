import { afterEach, describe, expect, it } from 'vitest';
import { certManagerConfig } from './cert-manager.config.js';

const saved = { ...process.env };
const load = (env: Record<string, string>) => {
  process.env = { ...saved, POD_NAMESPACE: 'outrigger-system', ...env };
  return certManagerConfig();
};

describe('certManagerConfig', () => {
  afterEach(() => {
    process.env = { ...saved };
  });

  it('documents its defaults: service mode, keep-in-sync, annotation selection', () => {
    const config = load({});
    expect(config.port).toBe(8080);
    expect(config.caSecretName).toBe('outrigger-webhook-ca');
    expect(config.servingSecretName).toBe('outrigger-injector-tls');
    expect(config.rotation.serviceName).toBe('outrigger-injector');
    expect(config.rotation.leafLifetimeMs).toBe(90 * 86_400_000);
    expect(config.webhooks).toEqual({ names: [], selectByAnnotation: true, register: undefined });
    expect(config.lease).toEqual({ name: 'outrigger-cert-manager', namespace: 'outrigger-system', leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 });
  });

  it('reads durations, lists and the register mode', () => {
    const config = load({
      CA_LIFETIME: '30d',
      LEAF_LIFETIME: '7d12h',
      SETTLE: '90s',
      WEBHOOK_NAMES: 'a, b',
      REGISTER_WEBHOOK: 'true',
      WEBHOOK_URL_PORT: '9443',
      EXTRA_IP_ADDRESSES: '127.0.0.1',
    });
    expect(config.rotation.caLifetimeMs).toBe(30 * 86_400_000);
    expect(config.rotation.leafLifetimeMs).toBe(7.5 * 86_400_000);
    expect(config.rotation.settleMs).toBe(90_000);
    expect(config.rotation.ipAddresses).toEqual(['127.0.0.1']);
    expect(config.webhooks.names).toEqual(['a', 'b']);
    expect(config.webhooks.register).toEqual({ name: 'outrigger-injector', client: { mode: 'url', port: 9443 }, failurePolicy: 'Fail' });
  });

  it('names the variable of a bad duration, all at once', () => {
    expect(() => load({ CA_LIFETIME: '365', SETTLE: '5 minutes' })).toThrow(/CA_LIFETIME: "365" is not a duration[\s\S]*SETTLE: "5 minutes" is not a duration/);
  });

  it('rejects lifetimes so short that the back-dating would renew them at once', () => {
    expect(() => load({ LEAF_LIFETIME: '30s', CA_LIFETIME: '90s' })).toThrow(/CA_LIFETIME: must be at least 180s[\s\S]*LEAF_LIFETIME/);
  });

  it('names the environment variables, not internal fields, for every rotation problem', () => {
    const error = () => load({ KEY_BITS: '1024', SERVICE_NAME: 'Injector', CLUSTER_DOMAIN: 'bad_domain', EXTRA_DNS_NAMES: 'ok.example, -bad', EXTRA_IP_ADDRESSES: '10.0.0.300', LEAF_LIFETIME: '400d' });
    expect(error).toThrow(
      [
        'invalid configuration:',
        '  SERVICE_NAME: "Injector" is not a DNS label',
        '  CLUSTER_DOMAIN: "bad_domain" is not a DNS name',
        '  EXTRA_DNS_NAMES: "-bad" is not a DNS name',
        '  EXTRA_IP_ADDRESSES: "10.0.0.300" is not an IP address',
        '  LEAF_LIFETIME: must not exceed the CA lifetime (34560000s > 31536000s)',
        '  KEY_BITS: must be an integer of at least 2048 (got 1024)',
      ].join('\n'),
    );
    expect(error).not.toThrow(/keyBits|serviceName|leafLifetimeMs/);
  });

  it('requires the install namespace', () => {
    process.env = { ...saved };
    delete process.env.POD_NAMESPACE;
    expect(() => certManagerConfig()).toThrow(/POD_NAMESPACE/);
  });
});
