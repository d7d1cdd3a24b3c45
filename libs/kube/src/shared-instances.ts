import { randomInt } from 'node:crypto';

interface Held<P> {
  readonly value: P;
  readonly hash: number;
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
  /** The held instances by identity: holding or releasing one needs no key. */
  private instances = new WeakMap<object, Held<P>>();

  /** `seed`: random unless given, so that keys partly chosen by tenants cannot be made to collide by design. */
  constructor(
    private readonly keyOf: (value: P) => string,
    private readonly seed: number = randomInt(2 ** 32),
  ) {}

  /** The instance equal to `value` (`value` itself when none is held), held once more. */
  hold(value: P): P {
    const instance = this.instanceOf(value);
    if (instance) {
      instance.refs++;
      return value;
    }
    const key = this.keyOf(value);
    const hash = hashString(key, this.seed);
    const bucket = this.buckets.get(hash);
    const held = bucket?.find((h) => this.keyOf(h.value) === key);
    if (held) {
      held.refs++;
      return held.value;
    }
    const entry = { value, hash, refs: 1 };
    if (bucket) bucket.push(entry);
    else this.buckets.set(hash, [entry]);
    if (typeof value === 'object' && value !== null) this.instances.set(value, entry);
    return value;
  }

  /** Drops one hold of the instance equal to `value`; the last one forgets it. */
  release(value: P): void {
    // Callers release the instance they were handed: found by identity without building its key.
    let held = this.instanceOf(value);
    if (!held) {
      const key = this.keyOf(value);
      held = this.buckets.get(hashString(key, this.seed))?.find((h) => this.keyOf(h.value) === key);
    }
    if (!held || --held.refs > 0) return;
    const bucket = this.buckets.get(held.hash) ?? [];
    if (bucket.length <= 1) this.buckets.delete(held.hash);
    else bucket.splice(bucket.indexOf(held), 1);
    // Only held instances are in the map, and `held.value` is the one `value` stood for.
    if (typeof held.value === 'object' && held.value !== null) this.instances.delete(held.value);
  }

  clear(): void {
    this.buckets.clear();
    this.instances = new WeakMap();
  }

  /** The entry of `value` if it is itself a held instance (and still held). */
  private instanceOf(value: P): Held<P> | undefined {
    if (typeof value !== 'object' || value === null) return undefined;
    const held = this.instances.get(value);
    return held && held.refs > 0 ? held : undefined;
  }
}

export const FNV_OFFSET_BASIS = 0x811c9dc5;

/** FNV-1a over UTF-16 code units, from `seed`: fast and well spread for names. */
export function hashString(text: string, seed: number = FNV_OFFSET_BASIS): number {
  let hash = seed;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  return hash >>> 0;
}
