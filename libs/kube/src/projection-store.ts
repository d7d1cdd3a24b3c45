import { isDeepStrictEqual } from 'node:util';

export type ProjectionChange<P> =
  | { readonly type: 'add'; readonly key: string; readonly value: P }
  | { readonly type: 'update'; readonly key: string; readonly value: P; readonly old: P }
  | { readonly type: 'delete'; readonly key: string; readonly old: P };

/**
 * The reflector's memory: one small projection per object key. Every mutation reports what
 * changed, and nothing when a new projection equals the stored one, so consumers are not woken
 * by status churn in fields they do not project.
 */
export class ProjectionStore<P> {
  private readonly items = new Map<string, P>();

  constructor(private readonly equals: (a: P, b: P) => boolean = isDeepStrictEqual) {}

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

  /** Stores `value` under `key`; `undefined` (the object is not of interest) removes the key. */
  set(key: string, value: P | undefined): ProjectionChange<P> | undefined {
    if (value === undefined) return this.delete(key);
    const old = this.items.get(key);
    this.items.set(key, value);
    if (old === undefined) return { type: 'add', key, value };
    return this.equals(old, value) ? undefined : { type: 'update', key, value, old };
  }

  delete(key: string): ProjectionChange<P> | undefined {
    const old = this.items.get(key);
    if (old === undefined) return undefined;
    this.items.delete(key);
    return { type: 'delete', key, old };
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
