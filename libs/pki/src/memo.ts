/**
 * A bounded memo of a pure function of a string: parsing and signature checks see the same few
 * certificates again and again (every rotation run, every reload), so each is computed once.
 * Cleared when full, so it never grows without bound.
 */
export class Memo<V> {
  private readonly entries = new Map<string, V>();

  constructor(private readonly limit: number) {}

  get(key: string, compute: () => V): V {
    if (this.entries.has(key)) return this.entries.get(key) as V;
    const value = compute();
    if (this.entries.size >= this.limit) this.entries.clear();
    this.entries.set(key, value);
    return value;
  }
}
