import type { AdmissionregistrationV1Api, CoreV1Api, V1Pod } from '@kubernetes/client-node';
import type { MutatingWebhookConfiguration } from '@outrigger/admission';

/** A dry-run create that shows whether the API server calls the suite's webhook: `pod` in `namespace` gets container `agent` only then. */
export interface WebhookProbe {
  readonly namespace: string;
  readonly pod: V1Pod;
  readonly agent: string;
}

// The API server picks webhook configurations up asynchronously, in both directions: a suite that
// stopped its injector while the API server still called it would fail the next suite's creates.
async function untilCalled(core: CoreV1Api, probe: WebhookProbe, called: boolean): Promise<void> {
  let last = '';
  for (let attempt = 0; attempt < 150; attempt++) {
    try {
      const created = await core.createNamespacedPod({ namespace: probe.namespace, body: structuredClone(probe.pod), dryRun: 'All' });
      if ([...(created.spec?.initContainers ?? []), ...(created.spec?.containers ?? [])].some((c) => c.name === probe.agent) === called) return;
      last = called ? 'not mutated yet' : 'still mutated';
    } catch (error) {
      last = (error as Error).message;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`the webhook was ${called ? 'never called' : 'still called'} after 30 s (last: ${last})`);
}

/** Registers the webhook and returns once the API server calls it. */
export async function registerWebhook(admissionApi: AdmissionregistrationV1Api, core: CoreV1Api, configuration: MutatingWebhookConfiguration, probe: WebhookProbe): Promise<void> {
  await admissionApi.createMutatingWebhookConfiguration({ body: structuredClone(configuration) as never });
  await untilCalled(core, probe, true);
}

/** Deletes the webhook and returns once the API server no longer calls it; its injector may stop then. */
export async function unregisterWebhook(admissionApi: AdmissionregistrationV1Api, core: CoreV1Api, name: string, probe: WebhookProbe | undefined): Promise<void> {
  const deleted = await admissionApi.deleteMutatingWebhookConfiguration({ name }).then(() => true, () => false);
  if (deleted && probe) await untilCalled(core, probe, false);
}
