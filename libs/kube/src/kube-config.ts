import { existsSync } from 'node:fs';
import { KubeConfig } from '@kubernetes/client-node';

const SERVICE_ACCOUNT_TOKEN = '/var/run/secrets/kubernetes.io/serviceaccount/token';

export interface LoadKubeConfigOptions {
  /** Prefix for the in-cluster ServiceAccount files (client-node's `pathPrefix`); for tests. */
  readonly inClusterRoot?: string;
}

/**
 * The client configuration, from the first that exists: the explicit path, $KUBECONFIG (first
 * file of a list), the in-cluster ServiceAccount. Unlike client-node's loadFromDefault it never
 * falls back to ~/.kube/config: a controller must not talk to whatever cluster a developer's
 * home directory happens to point at.
 */
export function loadKubeConfig(path?: string, options: LoadKubeConfigOptions = {}): KubeConfig {
  const kc = new KubeConfig();
  const file = path || process.env.KUBECONFIG?.split(':').find(Boolean);
  if (file) {
    const source = path ? '' : ' (from KUBECONFIG)';
    if (!existsSync(file)) throw new Error(`kubeconfig ${file}${source} does not exist`);
    kc.loadFromFile(file);
    if (!kc.getCurrentCluster()) throw new Error(`kubeconfig ${file}${source} has no current context with a cluster`);
    return kc;
  }
  const root = options.inClusterRoot ?? '';
  const token = `${root}${SERVICE_ACCOUNT_TOKEN}`;
  if (process.env.KUBERNETES_SERVICE_HOST && process.env.KUBERNETES_SERVICE_PORT && existsSync(token)) {
    kc.loadFromCluster(root);
    return kc;
  }
  throw new Error(
    'no Kubernetes configuration: pass a kubeconfig path, set KUBECONFIG, or run in a pod with a ServiceAccount ' +
      `(KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT set, ${token} present)`,
  );
}
