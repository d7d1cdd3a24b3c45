import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { parse } from 'yaml';
import { ClientNodeKubeClient } from './client-node-kube-client.js';
import { HttpsKubeClient, type KubeConnection } from './https-kube-client.js';
import type { KubeClient } from './kube-request.js';

const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

export interface LoadKubeClientOptions {
  /** Prefix for the in-cluster ServiceAccount files; for tests. */
  readonly inClusterRoot?: string;
}

/**
 * The API client, configured from the first that exists: the explicit kubeconfig path,
 * $KUBECONFIG (first file of a list), the in-cluster ServiceAccount. Unlike client-node's
 * loadFromDefault it never falls back to ~/.kube/config: a controller must not talk to whatever
 * cluster a developer's home directory happens to point at.
 */
export function loadKubeClient(path?: string, options: LoadKubeClientOptions = {}): KubeClient {
  const file = path || process.env.KUBECONFIG?.split(':').find(Boolean);
  if (file) {
    const source = `kubeconfig ${file}${path ? '' : ' (from KUBECONFIG)'}`;
    if (!existsSync(file)) throw new Error(`${source} does not exist`);
    return clientFromKubeconfig(readFileSync(file, 'utf8'), file, source);
  }
  const dir = `${options.inClusterRoot ?? ''}${SERVICE_ACCOUNT_DIR}`;
  const { KUBERNETES_SERVICE_HOST: host, KUBERNETES_SERVICE_PORT: port } = process.env;
  if (host && port && existsSync(`${dir}/token`)) {
    return new HttpsKubeClient({
      server: `https://${host.includes(':') ? `[${host}]` : host}:${port}`,
      ca: readFileSync(`${dir}/ca.crt`, 'utf8'),
      tokenFile: `${dir}/token`,
    });
  }
  throw new Error(
    'no Kubernetes configuration: pass a kubeconfig path, set KUBECONFIG, or run in a pod with a ServiceAccount ' +
      `(KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT set, ${dir}/token present)`,
  );
}

/** The current context of a kubeconfig as a client; `file` resolves relative paths, `source` names it in errors. */
export function clientFromKubeconfig(text: string, file: string, source = `kubeconfig ${file}`): KubeClient {
  let config: Record<string, unknown>;
  try {
    config = (parse(text) ?? {}) as Record<string, unknown>;
  } catch (error) {
    throw new Error(`${source} is not valid YAML: ${(error as Error).message}`);
  }
  const named = (list: 'contexts' | 'clusters' | 'users', key: 'context' | 'cluster' | 'user', name: unknown): Record<string, unknown> => {
    const entries = Array.isArray(config[list]) ? (config[list] as Array<Record<string, unknown> | null>) : [];
    const found = entries.find((e) => e?.name === name)?.[key];
    if (!found || typeof found !== 'object') throw new Error(`${source}: ${key} "${String(name)}" of the current context is not in ${list}`);
    return found as Record<string, unknown>;
  };
  const contextName = config['current-context'];
  if (!contextName) throw new Error(`${source} has no current-context`);
  const context = named('contexts', 'context', contextName);
  const cluster = named('clusters', 'cluster', context.cluster);
  const user = context.user === undefined ? {} : named('users', 'user', context.user);
  const server = cluster.server;
  if (typeof server !== 'string' || !server) throw new Error(`${source}: cluster "${String(context.cluster)}" has no server`);

  // Exec plugins, auth providers and proxies: leave them to client-node, loaded only for this.
  if (user.exec || user['auth-provider'] || cluster['proxy-url']) return ClientNodeKubeClient.fromFile(server, file);

  const base = dirname(resolve(file));
  const pem = (data: unknown, path: unknown, what: string): string | undefined => {
    if (typeof data === 'string' && data) return Buffer.from(data, 'base64').toString('utf8');
    if (typeof path !== 'string' || !path) return undefined;
    try {
      return readFileSync(resolve(base, path), 'utf8');
    } catch (error) {
      throw new Error(`${source}: cannot read ${what} ${path}: ${(error as Error).message}`);
    }
  };
  const str = (value: unknown): string | undefined => (typeof value === 'string' && value ? value : undefined);
  const connection: KubeConnection = {
    server,
    ca: pem(cluster['certificate-authority-data'], cluster['certificate-authority'], 'certificate-authority'),
    insecureSkipTlsVerify: cluster['insecure-skip-tls-verify'] === true,
    tlsServerName: str(cluster['tls-server-name']),
    cert: pem(user['client-certificate-data'], user['client-certificate'], 'client-certificate'),
    key: pem(user['client-key-data'], user['client-key'], 'client-key'),
    token: str(user.token),
    tokenFile: typeof user.tokenFile === 'string' && user.tokenFile ? resolve(base, user.tokenFile) : undefined,
    username: str(user.username),
    password: str(user.password),
    impersonate: {
      user: str(user.as),
      uid: str(user['as-uid']),
      groups: Array.isArray(user['as-groups']) ? user['as-groups'].map(String) : undefined,
    },
  };
  return new HttpsKubeClient(connection);
}
