import { INJECTION_LABEL_KEY, INJECTION_LABEL_VALUE, namespacesDigest, type NamespacesHeld } from '@outrigger/admission';
import { getFromInjector } from './injector-metrics.js';
import type { RunningInjector } from './injector-process.js';

export interface HeldAndListed {
  /** What the injector's /readyz says it holds. */
  readonly held: NamespacesHeld | undefined;
  /** The labelled namespaces the API server lists now, and their digest. */
  readonly listed: { readonly count: number; readonly digest: string };
}

/** The labelled namespaces as `injector`'s /readyz holds them, and as the API server lists them now (`kubectl` runs kubectl against it). */
export async function heldAndListed(injector: RunningInjector, kubectl: (...args: string[]) => string): Promise<HeldAndListed> {
  const { body } = await getFromInjector(injector.baseUrl, injector.ca, '/readyz');
  const items = (JSON.parse(kubectl('get', 'namespaces', '-l', `${INJECTION_LABEL_KEY}=${INJECTION_LABEL_VALUE}`, '-o', 'json')) as { items: Array<{ metadata: { name: string; resourceVersion: string } }> }).items;
  return {
    held: (JSON.parse(body) as { details?: { namespaces?: NamespacesHeld } }).details?.namespaces,
    listed: { count: items.length, digest: namespacesDigest(items.map(({ metadata }) => metadata)) },
  };
}
