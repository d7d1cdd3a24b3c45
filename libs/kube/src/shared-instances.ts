interface Held<P> {
  readonly value: P;
  refs: number;
}

/**
 * Keeps one instance of values with equal share keys, counting who holds it, without keeping the
 * keys themselves: a key spells out the names in its value (a namespace, a ServiceAccount name of up
 * to 253 characters), so a Map by key would hold a second copy of every name beside the value. Keys
 * are hashed; a hash's few values are told apart by computing their keys again.
 */
export class SharedInstances<P> {
  private readonly buckets = new Map<number, Held<P>[]>();

  constructor(private readonly keyOf: (value: P) => string) {}

  /** The instance equal to `value` (`value` itself when none is held), held once more. */
  hold(value: P): P {
    const key = this.keyOf(value);
    const hash = hashString(key);
    const bucket = this.buckets.get(hash);
    const held = bucket?.find((h) => this.keyOf(h.value) === key);
    if (held) {
      held.refs++;
      return held.value;
    }
    const entry = { value, refs: 1 };
    if (bucket) bucket.push(entry);
    else this.buckets.set(hash, [entry]);
    return value;
  }

  /** Drops one hold of the instance equal to `value`; the last one forgets it. */
  release(value: P): void {
    const key = this.keyOf(value);
    const hash = hashString(key);
    const bucket = this.buckets.get(hash);
    // Callers release the instance they were handed: found by identity without building its key again.
    const index = bucket?.findIndex((h) => h.value === value || this.keyOf(h.value) === key) ?? -1;
    if (!bucket || index < 0) return;
    const held = bucket[index] as Held<P>;
    if (--held.refs > 0) return;
    if (bucket.length === 1) this.buckets.delete(hash);
    else bucket.splice(index, 1);
  }

  clear(): void {
    this.buckets.clear();
  }
}

/** FNV-1a over UTF-16 code units: fast and well spread for names. */
export function hashString(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  return hash >>> 0;
}
