/**
 * How many Events one object may get: a bucket of `burst` per object, refilled by one every
 * `refillMs` (client-go's spam filter defaults: 25, one per 5 minutes). Events are written on
 * behalf of what tenants do (bindings rewritten as their pods come and go), so without a bound
 * one tenant's churn is an Event flood, in `default` for cluster-scoped objects.
 */
export class EventSpamFilter {
  private readonly buckets = new Map<string, { tokens: number; atMs: number }>();

  constructor(
    private readonly options: { readonly burst: number; readonly refillMs: number; readonly maxObjects: number; readonly now: () => number } = {
      burst: 25,
      refillMs: 300_000,
      maxObjects: 4_096,
      now: Date.now,
    },
  ) {}

  /** Whether an Event about `object` (an identity of it, never parsed) may be written now; takes a token if so. */
  allow(object: string): boolean {
    const { burst, refillMs, maxObjects, now } = this.options;
    const nowMs = now();
    const held = this.buckets.get(object);
    const tokens = held ? Math.min(burst, held.tokens + Math.floor((nowMs - held.atMs) / refillMs)) : burst;
    const atMs = held && tokens < burst ? held.atMs + Math.floor((nowMs - held.atMs) / refillMs) * refillMs : nowMs;
    // Least recently used first out: Map keeps insertion order.
    this.buckets.delete(object);
    if (this.buckets.size >= maxObjects) this.buckets.delete(this.buckets.keys().next().value as string);
    this.buckets.set(object, { tokens: Math.max(0, tokens - 1), atMs });
    return tokens > 0;
  }
}
