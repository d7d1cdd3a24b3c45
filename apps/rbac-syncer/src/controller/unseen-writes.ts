import { bindingId, type ObservedBinding } from '../plan/observed-profile.js';

/** A binding written or deleted by a key's plan: which one, and the version the plan saw (undefined: it was created). */
export interface BindingWrite {
  readonly kind: ObservedBinding['kind'];
  readonly name: string;
  /** As the object's metadata says it (a ClusterRoleBinding has none; its name alone tells it apart). */
  readonly namespace: string | undefined;
  readonly from: string | undefined;
}

/**
 * The bindings each key's last plan changed, until the watch shows them. A plan from a view that
 * lacks its own last write would plan that write again (a pod deleted gives two events, a moment
 * apart), only to be refused as stale: the key waits instead, and the watch's event for the write
 * queues it again. The version planned from is enough to tell: the watch's next version of that
 * binding is the write. Past `maxWaitMs` the key is planned anyway, as if nothing were recorded.
 */
export class UnseenWrites {
  private readonly byKey = new Map<string, { readonly writes: readonly BindingWrite[]; readonly untilMs: number }>();

  constructor(private readonly maxWaitMs: number) {}

  record(key: string, writes: readonly BindingWrite[], nowMs: number): void {
    if (writes.length === 0) this.byKey.delete(key);
    else this.byKey.set(key, { writes, untilMs: nowMs + this.maxWaitMs });
  }

  /** How long `key` should wait for the watch, given the bindings the view shows it now; 0: plan it. */
  waitMs(key: string, observed: readonly ObservedBinding[], nowMs: number): number {
    const recorded = this.byKey.get(key);
    if (!recorded) return 0;
    const unseen = recorded.writes.some((write) => versionNow(write, observed) === write.from);
    if (unseen && nowMs < recorded.untilMs) return recorded.untilMs - nowMs;
    this.byKey.delete(key);
    return 0;
  }

  clear(): void {
    this.byKey.clear();
  }
}

function versionNow(write: BindingWrite, observed: readonly ObservedBinding[]): string | undefined {
  const id = bindingId(write);
  return observed.find((b) => bindingId(b) === id)?.resourceVersion;
}
