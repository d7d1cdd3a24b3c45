import { describe, expect, it } from 'vitest';
import { ProjectionStore } from './projection-store.js';

describe('ProjectionStore', () => {
  it('reports adds, real updates and deletes, and stays silent for equal projections', () => {
    const store = new ProjectionStore<{ sa: string }>();
    expect(store.set('ns/a', { sa: 'x' })).toEqual({ type: 'add', key: 'ns/a', value: { sa: 'x' } });
    expect(store.set('ns/a', { sa: 'x' })).toBeUndefined();
    expect(store.set('ns/a', { sa: 'y' })).toEqual({ type: 'update', key: 'ns/a', value: { sa: 'y' }, old: { sa: 'x' } });
    expect(store.delete('ns/a')).toEqual({ type: 'delete', key: 'ns/a', old: { sa: 'y' } });
    expect(store.delete('ns/a')).toBeUndefined();
    expect(store.size).toBe(0);
  });

  it('treats an undefined projection as absence', () => {
    const store = new ProjectionStore<number>();
    store.set('a', 1);
    expect(store.set('a', undefined)).toEqual({ type: 'delete', key: 'a', old: 1 });
    expect(store.set('b', undefined)).toBeUndefined();
    expect(store.has('a')).toBe(false);
  });

  it('replace() turns the store into the new list and reports the difference', () => {
    const store = new ProjectionStore<number>();
    store.set('keep', 1);
    store.set('change', 1);
    store.set('vanished', 1);
    const changes = store.replace(new Map([['keep', 1], ['change', 2], ['new', 3]]));
    expect(changes).toEqual([
      { type: 'delete', key: 'vanished', old: 1 },
      { type: 'update', key: 'change', value: 2, old: 1 },
      { type: 'add', key: 'new', value: 3 },
    ]);
    expect(Object.fromEntries(store.entries())).toEqual({ keep: 1, change: 2, new: 3 });
  });

  it('uses the given equality', () => {
    const store = new ProjectionStore<{ v: number; noise: number }>((a, b) => a.v === b.v);
    store.set('a', { v: 1, noise: 1 });
    expect(store.set('a', { v: 1, noise: 2 })).toBeUndefined();
  });
});
