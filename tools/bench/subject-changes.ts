/** A change the bench made to a namespace's membership of the subject set, waiting to show in the binding. */
export interface PendingChange {
  readonly namespace: string;
  /** true: its first opted-in pod was created; false: its last one was deleted. */
  readonly present: boolean;
  /** When the API server answered the create or delete (ms). */
  readonly at: number;
}

/**
 * Settles the pending changes that the binding's subject namespaces now reflect: returns their
 * latencies (ms from the change to `now`) and removes them from `pending`, keyed by namespace.
 */
export function settle(pending: Map<string, PendingChange>, subjectNamespaces: ReadonlySet<string>, now: number): number[] {
  const latencies: number[] = [];
  for (const [namespace, change] of pending) {
    if (subjectNamespaces.has(namespace) !== change.present) continue;
    latencies.push(now - change.at);
    pending.delete(namespace);
  }
  return latencies;
}
