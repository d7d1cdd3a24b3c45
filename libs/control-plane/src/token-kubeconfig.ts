import { writeFileSync } from 'node:fs';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';

/**
 * Writes a kubeconfig to `file` that authenticates with a fresh TokenRequest token of `serviceAccount`
 * only (the admin kubeconfig's client certificate would authenticate first), bound to pod `boundTo` if given.
 */
export async function writeTokenKubeconfig(admin: KubeConfig, file: string, namespace: string, serviceAccount: string, boundTo?: string): Promise<string> {
  const boundObjectRef = boundTo === undefined ? undefined : { apiVersion: 'v1', kind: 'Pod', name: boundTo };
  const spec = { audiences: [], expirationSeconds: 3600, ...(boundObjectRef ? { boundObjectRef } : {}) };
  const request = await admin.makeApiClient(CoreV1Api).createNamespacedServiceAccountToken({ name: serviceAccount, namespace, body: { spec } });
  const cluster = admin.getCurrentCluster();
  const token = request.status?.token;
  if (!cluster || !token) throw new Error(`no cluster in the admin kubeconfig or no token for ${namespace}/${serviceAccount}`);
  const kc = new KubeConfig();
  kc.loadFromOptions({ clusters: [cluster], users: [{ name: serviceAccount, token }], contexts: [{ name: serviceAccount, cluster: cluster.name, user: serviceAccount }], currentContext: serviceAccount });
  writeFileSync(file, kc.exportConfig());
  return file;
}
