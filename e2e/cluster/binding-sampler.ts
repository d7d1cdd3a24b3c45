import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import { inject } from 'vitest';

export interface BindingSamples {
  readonly samples: number;
  readonly elapsedMs: number;
  /** Each sample where a ServiceAccount with a live agent was not bound: when, and which. */
  readonly unbound: readonly string[];
}

/**
 * Every `intervalMs` until `until` resolves, on a thread of its own: the pods of `namespaces` that
 * carry the agent container `agent` (not deleting), and the profile's bindings there
 * (`<binding>.<namespace>`); a sample records each ServiceAccount of such a pod missing from its
 * namespace's binding.
 */
export async function sampleBindings(namespaces: readonly string[], options: { binding: string; agent: string; intervalMs: number; until: Promise<unknown> }): Promise<BindingSamples> {
  const worker = new Worker(new URL('./binding-sampler-worker.ts', import.meta.url), {
    workerData: { kubeconfigPath: inject('cluster').kubeconfigPath, namespaces: [...namespaces], binding: options.binding, agent: options.agent, intervalMs: options.intervalMs },
  });
  void options.until.finally(() => worker.postMessage('stop'));
  const [result] = (await Promise.race([once(worker, 'message'), once(worker, 'error').then(([error]) => Promise.reject(error as Error))])) as [BindingSamples];
  await worker.terminate();
  return result;
}
