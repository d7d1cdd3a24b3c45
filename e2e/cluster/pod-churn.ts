import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { inject } from 'vitest';

const OPTED_IN = {
  'xxl-agent/enable': 'true',
  'xxl-agent/job-addr': 'http://xxl-job-admin.jobs:8080/xxl-job-admin',
  'xxl-agent/target-container': 'app',
  'xxl-agent/job-name': 'churn',
};

export interface ChurnResult {
  readonly created: number;
  readonly failed: number;
  readonly withoutAgent: number;
  /** The distinct failure messages, as the API server returned them. */
  readonly errors: readonly string[];
}

/**
 * Creates opted-in pods through the API server, `concurrency` at a time, until `until` resolves, and
 * deletes each right away. Each pod carries a scheduling gate, so it is admitted exactly like any
 * other pod (the webhook is called) but never scheduled: the node is spared the churn.
 */
export async function churnPods(namespace: string, until: Promise<unknown>, concurrency = 4): Promise<ChurnResult> {
  const kc = new KubeConfig();
  kc.loadFromFile(inject('cluster').kubeconfigPath);
  const core = kc.makeApiClient(CoreV1Api);
  let done = false;
  void until.finally(() => (done = true));
  let created = 0;
  let failed = 0;
  let withoutAgent = 0;
  const errors = new Set<string>();
  const worker = async () => {
    while (!done) {
      try {
        const pod = await core.createNamespacedPod({
          namespace,
          body: {
            metadata: { generateName: 'churn-', annotations: OPTED_IN },
            spec: { schedulingGates: [{ name: 'outrigger.dev/never' }], containers: [{ name: 'app', image: 'localhost/busybox:local' }] },
          },
        });
        created++;
        if (!pod.spec?.containers.some((c) => c.name === 'xxl-agent')) withoutAgent++;
        await core.deleteNamespacedPod({ namespace, name: pod.metadata?.name ?? '', gracePeriodSeconds: 0 }).catch(() => undefined);
      } catch (error) {
        failed++;
        errors.add(((error as { body?: string }).body ?? (error as Error).message).slice(0, 300));
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return { created, failed, withoutAgent, errors: [...errors] };
}
