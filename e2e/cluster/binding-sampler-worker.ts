import { parentPort, workerData } from 'node:worker_threads';
import { CoreV1Api, KubeConfig, RbacAuthorizationV1Api } from '@kubernetes/client-node';

// The sampling loop of binding-sampler.ts, on its own thread: the test's synchronous kubectl calls
// (rollout status, patches) block its event loop for seconds, this one keeps its interval.
const { kubeconfigPath, namespaces, binding, agent, intervalMs } = workerData as { kubeconfigPath: string; namespaces: string[]; binding: string; agent: string; intervalMs: number };
const kc = new KubeConfig();
kc.loadFromFile(kubeconfigPath);
const core = kc.makeApiClient(CoreV1Api);
const rbac = kc.makeApiClient(RbacAuthorizationV1Api);
let done = false;
parentPort?.on('message', () => (done = true));
const started = Date.now();
const unbound: string[] = [];
let samples = 0;
while (!done) {
  const next = Date.now() + intervalMs;
  // Each namespace's pods before its binding: a ServiceAccount bound only after its pods were listed still counts as bound.
  const seen = await Promise.all(
    namespaces.map(async (namespace) => {
      const pods = await core.listNamespacedPod({ namespace });
      const stored = await rbac.readClusterRoleBinding({ name: `${binding}.${namespace}` }).catch(() => undefined);
      return { namespace, pods, stored };
    }),
  );
  for (const { namespace, pods, stored } of seen) {
    const withAgent = new Set(
      pods.items
        .filter((p) => !p.metadata?.deletionTimestamp && [...(p.spec?.initContainers ?? []), ...(p.spec?.containers ?? [])].some((c) => c.name === agent))
        .map((p) => p.spec?.serviceAccountName ?? 'default'),
    );
    const bound = new Set((stored?.subjects ?? []).filter((s) => s.kind === 'ServiceAccount' && s.namespace === namespace).map((s) => s.name));
    for (const sa of withAgent) if (!bound.has(sa)) unbound.push(`+${Date.now() - started} ms: ${namespace}/${sa}`);
  }
  samples++;
  await new Promise((r) => setTimeout(r, Math.max(0, next - Date.now())));
}
parentPort?.postMessage({ samples, elapsedMs: Date.now() - started, unbound });
