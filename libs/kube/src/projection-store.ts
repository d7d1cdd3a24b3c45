import { isDeepStrictEqual } from 'node:util';
import { SharedInstances } from './shared-instances.js';

export type ProjectionChange<P> =
  | { readonly type: 'add'; readonly key: string; readonly value: P }
  | { readonly type: 'update'; readonly key: string; readonly value: P; readonly old: P }
  | { readonly type: 'delete'; readonly key: string; readonly old: P };

/**
 * The reflector's memory: one small projection per object key. Every mutation reports what
 * changed, and nothing when a new projection equals the stored one, so consumers are not woken
 * by status churn in fields they do not project.
 */
export interface ProjectionStoreOptions<P, V = never> {
  /** Projection equality; deep equality by default. */
  readonly equals?: (a: P, b: P) => boolean;
  /**
   * Files each projection under keys within groups (as client-go's indexers do), so a consumer can
   * ask which keys of one group are in use without walking every projection or every other group.
   * It must be a pure function of the projection: the store computes it again to release an entry.
   * An entry may carry a typed value, which its key identifies (equal keys, equal values): the store
   * hands it back with indexValues(), so the key is never parsed.
   */
  readonly index?: (value: P) => readonly IndexEntry<V>[];
  /**
   * Projections with the same share key are equal: the store keeps one instance of them, so
   * thousands of objects that project alike (pods of one ServiceAccount) cost one projection.
   */
  readonly share?: (value: P) => string;
}

/** Where a projection is filed: a group, a key within it, and what the key stands for (if anything). */
export type IndexEntry<V = never> = readonly [group: string, key: string] | readonly [group: string, key: string, value: V];

export class ProjectionStore<P, V = never> {
  private readonly items = new Map<string, P>();
  /** Index group → key → how many stored projections carry it. */
  private readonly counts = new Map<string, Map<string, number>>();
  /** Index group → key → the value its entries carry, for keys in use whose entries carry one. */
  private readonly values = new Map<string, Map<string, V>>();
  /** The one instance stored per share key, and how many objects hold it. */
  private readonly shared: SharedInstances<P> | undefined;
  private readonly equals: (a: P, b: P) => boolean;

  constructor(private readonly options: ProjectionStoreOptions<P, V> = {}) {
    this.equals = options.equals ?? isDeepStrictEqual;
    this.shared = options.share ? new SharedInstances(options.share) : undefined;
  }

  get(key: string): P | undefined {
    return this.items.get(key);
  }

  has(key: string): boolean {
    return this.items.has(key);
  }

  get size(): number {
    return this.items.size;
  }

  keys(): string[] {
    return [...this.items.keys()];
  }

  entries(): Array<[string, P]> {
    return [...this.items.entries()];
  }

  /** The keys of `group` at least one stored projection carries. */
  indexKeys(group: string): IterableIterator<string> {
    return (this.counts.get(group) ?? NO_KEYS).keys();
  }

  /** The values the entries of `group` in use carry, each with how many stored projections carry it. */
  *indexValues(group: string): IterableIterator<[V, number]> {
    const values = this.values.get(group);
    if (!values) return;
    for (const [key, value] of values) yield [value, this.counts.get(group)?.get(key) ?? 0];
  }

  /** Stores `value` under `key`; `undefined` (the object is not of interest) removes the key. */
  set(key: string, value: P | undefined): ProjectionChange<P> | undefined {
    if (value === undefined) return this.delete(key);
    const old = this.items.get(key);
    value = this.hold(value);
    this.items.set(key, value);
    if (old !== undefined) this.release(old);
    // The same shared instance again (a relist): its entries are filed already.
    if (old !== value) this.reindex(old, value);
    if (old === undefined) return { type: 'add', key, value };
    return this.equals(old, value) ? undefined : { type: 'update', key, value, old };
  }

  delete(key: string): ProjectionChange<P> | undefined {
    const old = this.items.get(key);
    if (old === undefined) return undefined;
    this.items.delete(key);
    this.release(old);
    this.reindex(old, undefined);
    return { type: 'delete', key, old };
  }

  /** The shared instance equal to `value`, held once more. */
  private hold(value: P): P {
    return this.shared ? this.shared.hold(value) : value;
  }

  private release(value: P): void {
    this.shared?.release(value);
  }

  /** Entries are computed again to release them, not kept per projection: kept, they cost retained heap for every shared view. */
  private reindex(old: P | undefined, value: P | undefined): void {
    const index = this.options.index;
    if (!index) return;
    for (const [group, key] of old === undefined ? [] : index(old)) {
      const keys = this.counts.get(group);
      const count = (keys?.get(key) ?? 0) - 1;
      if (count > 0) {
        keys?.set(key, count);
        continue;
      }
      keys?.delete(key);
      if (keys?.size === 0) this.counts.delete(group);
      const values = this.values.get(group);
      if (values?.delete(key) && values.size === 0) this.values.delete(group);
    }
    for (const entry of value === undefined ? [] : index(value)) {
      const [group, key] = entry;
      const keys = this.counts.get(group) ?? new Map<string, number>();
      const count = (keys.get(key) ?? 0) + 1;
      this.counts.set(group, keys.set(key, count));
      if (entry.length === 3 && count === 1) {
        const values = this.values.get(group) ?? new Map<string, V>();
        this.values.set(group, values.set(key, entry[2]));
      }
    }
  }

  /**
   * Makes the store equal to `next` (a complete list) and returns the differences: adds and
   * updates for what is new or changed, deletes for what vanished, e.g. while disconnected.
   */
  replace(next: ReadonlyMap<string, P>): Array<ProjectionChange<P>> {
    const changes: Array<ProjectionChange<P>> = [];
    for (const key of this.keys()) {
      if (!next.has(key)) changes.push(this.delete(key) as ProjectionChange<P>);
    }
    for (const [key, value] of next) {
      const change = this.set(key, value);
      if (change) changes.push(change);
    }
    return changes;
  }
}

const NO_KEYS: ReadonlyMap<string, number> = new Map();
