import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { CLUSTER_NETWORK as NET } from './cluster-network.js';

/**
 * The cluster's own registries (CNCF Distribution) on the host address, with TLS from the cluster
 * CA: an open one for Outrigger's images, and a private one (htpasswd) for images only a pull
 * secret may fetch. The node's containerd pulls from these two and from nothing else.
 */
export interface LocalRegistry {
  /** host:port of the open registry. */
  readonly address: string;
  /** host:port of the registry that requires `credentials`. */
  readonly privateAddress: string;
  readonly credentials: { readonly username: string; readonly password: string };
  /** A directory holding the CA (ca.crt) the registries' certificate is issued by (buildah's --cert-dir). */
  readonly certDir: string;
  /** Where any other registry's requests go: a port on the host address where nothing listens. */
  readonly refusedEndpoint: string;
}

export const REGISTRY_USER = 'outrigger';

export function localRegistry(dir: string): LocalRegistry {
  return {
    address: `${NET.hostAddress}:${NET.registryPort}`,
    privateAddress: `${NET.hostAddress}:${NET.privateRegistryPort}`,
    credentials: { username: REGISTRY_USER, password: randomBytes(18).toString('base64url') },
    certDir: join(dir, 'registry', 'certs'),
    refusedEndpoint: `${NET.hostAddress}:${NET.refusedRegistryPort}`,
  };
}

export interface RegistryFiles {
  readonly dir: string;
  readonly address: string;
  readonly cert: string;
  readonly key: string;
  /** Signs the registry's upload state (it warns and makes one up when unset). */
  readonly secret: string;
  /** htpasswd file: set for the private registry. */
  readonly htpasswd?: string;
}

/** Distribution's configuration: filesystem storage below `dir`, TLS, no debug server, optional htpasswd. */
export function registryConfig(f: RegistryFiles): string {
  return stringify({
    version: 0.1,
    log: { level: 'warn', formatter: 'text' },
    storage: { filesystem: { rootdirectory: join(f.dir, 'data') }, delete: { enabled: true } },
    http: { addr: f.address, secret: f.secret, tls: { certificate: f.cert, key: f.key } },
    ...(f.htpasswd ? { auth: { htpasswd: { realm: 'outrigger-local-private', path: f.htpasswd } } } : {}),
  });
}

/**
 * containerd's registry host directory (CRI `config_path`): our two registries trusted through the
 * cluster CA, and `_default`, which every other registry falls back to, sent to the refused endpoint
 * so that a pull of docker.io, ghcr.io or any other name fails at once without leaving the host.
 */
export function writeRegistryHosts(hostsDir: string, registry: LocalRegistry): void {
  const ca = join(registry.certDir, 'ca.crt');
  const hosts = (name: string, content: string) => {
    mkdirSync(join(hostsDir, name), { recursive: true });
    writeFileSync(join(hostsDir, name, 'hosts.toml'), content);
  };
  for (const address of [registry.address, registry.privateAddress]) hosts(address, `server = "https://${address}"\nca = "${ca}"\n`);
  hosts('_default', `# Every registry without its own directory here: nothing listens there, so pulls fail at once.\nserver = "https://${registry.refusedEndpoint}"\ncapabilities = ["pull", "resolve"]\n`);
}

/** The environment the registry runs in: no telemetry export (its default would dial an OTLP endpoint). */
export const REGISTRY_ENV = { OTEL_SDK_DISABLED: 'true', OTEL_TRACES_EXPORTER: 'none' } as const;
