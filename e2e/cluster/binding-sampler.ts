import { CoreV1Api, KubeConfig, RbacAuthorizationV1Api } from '@kubernetes/client-node';
import { inject } from 'vitest';

export interface BindingSamples {
  readonly samples: number;
  /** Each sample where a ServiceAccount with a live agent was not bound: when, and which. */
  readonly unbound: readonly string[];
}

/**
 * Every `intervalMs` until `until` resolves: the pods of `namespaces` that carry the agent container
 * `agent` (not deleting), and the profile's bindings there (`<binding>.<namespace>`); a sample
 * records each ServiceAccount of such a pod missing from its namespace's binding.
 */
export async function sampleBindings(namespaces: readonly string[], options: { binding: string; agent: string; intervalMs: number; until: Promise<unknown> }): Promise<BindingSamples> {
  const kc = new KubeConfig();
  kc.loadFromFile(inject('cluster').kubeconfigPath);
  const core = kc.makeApiClient(CoreV1Api);
  const rbac = kc.makeApiClient(RbacAuthorizationV1Api);
  let done = false;
  void options.until.finally(() => (done = true));
  const started = Date.now();
  const unbound: string[] = [];
  let samples = 0;
  while (!done) {
    const next = Date.now() + options.intervalMs;
    for (const namespace of namespaces) {
      // Pods first: a ServiceAccount bound only after its pods were listed still counts as bound.
      const pods = await core.listNamespacedPod({ namespace });
      const withAgent = new Set(
        pods.items
          .filter((p) => !p.metadata?.deletionTimestamp && [...(p.spec?.initContainers ?? []), ...(p.spec?.containers ?? [])].some((c) => c.name === options.agent))
          .map((p) => p.spec?.serviceAccountName ?? 'default'),
      );
      const binding = await rbac.readClusterRoleBinding({ name: `${options.binding}.${namespace}` }).catch(() => undefined);
      const bound = new Set((binding?.subjects ?? []).filter((s) => s.kind === 'ServiceAccount' && s.namespace === namespace).map((s) => s.name));
      for (const sa of withAgent) if (!bound.has(sa)) unbound.push(`+${Date.now() - started} ms: ${namespace}/${sa}`);
    }
    samples++;
    await new Promise((r) => setTimeout(r, Math.max(0, next - Date.now())));
  }
  return { samples, unbound };
}
