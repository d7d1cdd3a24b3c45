/** A change the bench made to a namespace's membership of the subject set, waiting to show in the binding. */
export interface PendingChange {
  readonly namespace: string;
  /** true: its first opted-in pod was created; false: its last one was deleted. */
  readonly present: boolean;
  /** When the create or delete was sent (ms). */
  readonly requested: number;
  /** When the API server answered it, i.e. the change was stored (ms); unset until then. */
  answered?: number;
}

/** How long a settled change took: from the request (what a user sees), and from the API server's answer (the syncer's part). */
export interface Settled {
  readonly fromRequest: number;
  /** 0 when the binding showed the change before the answer reached the bench. */
  readonly fromAnswer: number;
}

/**
 * Settles the pending changes that the binding's subject namespaces now reflect: returns their
 * latencies and removes them from `pending`, keyed by namespace.
 */
export function settle(pending: Map<string, PendingChange>, subjectNamespaces: ReadonlySet<string>, now: number): Settled[] {
  const settled: Settled[] = [];
  for (const [namespace, change] of pending) {
    if (subjectNamespaces.has(namespace) !== change.present) continue;
    settled.push({ fromRequest: now - change.requested, fromAnswer: change.answered === undefined ? 0 : now - change.answered });
    pending.delete(namespace);
  }
  return settled;
}
