import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { localRegistry, registryConfig, writeRegistryHosts } from './local-registry.js';

describe('the local registries', () => {
  const registry = localRegistry('/var/lib/outrigger-cluster');

  it('live on the host address, the refused endpoint too, each start with its own password', () => {
    expect([registry.address, registry.privateAddress, registry.refusedEndpoint]).toEqual(['10.245.0.1:5000', '10.245.0.1:5001', '10.245.0.1:1']);
    expect(registry.credentials.password).not.toBe(localRegistry('/x').credentials.password);
    expect(registry.credentials.password.length).toBeGreaterThanOrEqual(24);
  });

  it('give containerd our two registries, trusted through the cluster CA, and send every other one to the refused endpoint', () => {
    const dir = mkdtempSync(join(tmpdir(), 'outrigger-hosts-'));
    try {
      writeRegistryHosts(dir, registry);
      expect(readdirSync(dir).sort()).toEqual(['10.245.0.1:5000', '10.245.0.1:5001', '_default']);
      expect(readFileSync(join(dir, '10.245.0.1:5001', 'hosts.toml'), 'utf8')).toBe('server = "https://10.245.0.1:5001"\nca = "/var/lib/outrigger-cluster/registry/certs/ca.crt"\n');
      const fallback = readFileSync(join(dir, '_default', 'hosts.toml'), 'utf8');
      expect(fallback).toContain('server = "https://10.245.0.1:1"\n');
      expect(fallback).not.toMatch(/^\[host/m);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('serve TLS on their address, with htpasswd only for the private one', () => {
    const files = { dir: '/d', address: registry.address, cert: '/c.crt', key: '/c.key', secret: 's' };
    const open = parse(registryConfig(files)) as Record<string, unknown>;
    expect(open['http']).toEqual({ addr: '10.245.0.1:5000', secret: 's', tls: { certificate: '/c.crt', key: '/c.key' } });
    expect(open['auth']).toBeUndefined();
    expect((parse(registryConfig({ ...files, htpasswd: '/h' })) as { auth: unknown }).auth).toEqual({ htpasswd: { realm: 'outrigger-local-private', path: '/h' } });
  });
});
