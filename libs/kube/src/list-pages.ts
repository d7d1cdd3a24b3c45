import type { KubeObject } from './kube-object.js';
import { kubeJson, type KubeClient } from './kube-request.js';

export interface ListOptions {
  readonly labelSelector?: string;
  readonly fieldSelector?: string;
  /** Objects per page; 500 by default (client-go's pager). */
  readonly pageSize?: number;
  readonly signal?: AbortSignal;
}

interface ListPage {
  readonly metadata?: { readonly resourceVersion?: string; readonly continue?: string };
  readonly items?: KubeObject[];
}

/**
 * Lists a collection page by page (limit/continue), handing each object to `onItem` as its page
 * arrives so that a caller keeping projections never holds the whole list. Resolves with the
 * list's resourceVersion, the point to start watching from. An expired continue token (410)
 * is thrown: the caller starts over. An `onItem` that returns a promise is awaited before the
 * next item (a caller that looks things up per object still holds one page at a time).
 */
export async function listPages(kc: KubeClient, path: string, options: ListOptions, onItem: (obj: KubeObject) => void | Promise<void>): Promise<string> {
  let continueToken: string | undefined;
  let resourceVersion = '';
  do {
    const page = await kubeJson<ListPage>(kc, {
      path,
      signal: options.signal,
      query: {
        labelSelector: options.labelSelector,
        fieldSelector: options.fieldSelector,
        limit: options.pageSize ?? 500,
        continue: continueToken,
      },
    });
    for (const item of page.items ?? []) {
      const pending = onItem(item);
      if (pending instanceof Promise) await pending;
    }
    resourceVersion = page.metadata?.resourceVersion ?? resourceVersion;
    continueToken = page.metadata?.continue || undefined;
  } while (continueToken);
  if (!resourceVersion) throw new Error(`list ${path} returned no resourceVersion`);
  return resourceVersion;
}
