import { randomBytes } from 'node:crypto';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';

/**
 * A fresh namespace for one test, with the `default` ServiceAccount that the missing
 * controller-manager would otherwise create (pods cannot be admitted without it).
 * Namespaces never finish terminating here (no namespace controller), so tests never reuse names.
 */
export async function createTestNamespace(kc: KubeConfig, prefix: string, labels: Record<string, string> = {}): Promise<string> {
  const core = kc.makeApiClient(CoreV1Api);
  const name = `${prefix}-${randomBytes(3).toString('hex')}`;
  await core.createNamespace({ body: { metadata: { name, labels } } });
  await core.createNamespacedServiceAccount({ namespace: name, body: { metadata: { name: 'default' } } });
  return name;
}

export function kubeConfigFrom(path: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromFile(path);
  return kc;
}
