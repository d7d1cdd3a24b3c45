import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type IndexEntry, ProjectionStore } from './projection-store.js';

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
    const store = new ProjectionStore<{ v: number; noise: number }>({ equals: (a, b) => a.v === b.v });
    store.set('a', { v: 1, noise: 1 });
    expect(store.set('a', { v: 1, noise: 2 })).toBeUndefined();
  });

  it('counts index keys per group as projections come, change and go, also through replace()', () => {
    const store = new ProjectionStore<{ ns: string; sa: string; live: boolean }, string>({ index: (v) => (v.live ? [[v.ns, v.sa, v.sa]] : []) });
    store.set('ns/a', { ns: 'ns', sa: 'x', live: true });
    store.set('ns/b', { ns: 'ns', sa: 'x', live: true });
    store.set('ns/c', { ns: 'ns', sa: 'y', live: true });
    store.set('other/a', { ns: 'other', sa: 'x', live: true });
    expect([...store.indexKeys('ns')].sort()).toEqual(['x', 'y']);
    expect(new Map(store.indexValues('ns'))).toEqual(new Map([['x', 2], ['y', 1]]));
    expect(new Map(store.indexValues('other'))).toEqual(new Map([['x', 1]]));
    store.delete('ns/a');
    expect([...store.indexKeys('ns')].sort()).toEqual(['x', 'y']);
    expect(new Map(store.indexValues('ns'))).toEqual(new Map([['x', 1], ['y', 1]]));
    store.set('ns/b', { ns: 'ns', sa: 'x', live: false });
    expect([...store.indexKeys('ns')]).toEqual(['y']);
    store.replace(new Map([['ns/d', { ns: 'ns', sa: 'z', live: true }]]));
    expect([...store.indexKeys('ns')]).toEqual(['z']);
    expect([...store.indexKeys('other')]).toEqual([]);
    store.set('ns/d', undefined);
    expect([...store.indexKeys('ns')]).toEqual([]);
    expect([...store.indexKeys('never-used')]).toEqual([]);
  });

  it('counts shared projections once per object holding them, through relists of equal values', () => {
    const store = new ProjectionStore<{ ns: string; sa: string }, string>({ share: (v) => `${v.ns}/${v.sa}`, index: (v) => [[v.ns, v.sa, v.sa]] });
    const list = () => new Map([['ns/a', { ns: 'ns', sa: 'x' }], ['ns/b', { ns: 'ns', sa: 'x' }], ['ns/c', { ns: 'ns', sa: 'y' }]]);
    store.replace(list());
    store.replace(list());
    store.set('ns/a', { ns: 'ns', sa: 'x' });
    expect(new Map(store.indexValues('ns'))).toEqual(new Map([['x', 2], ['y', 1]]));
    store.set('ns/b', { ns: 'ns', sa: 'y' });
    store.delete('ns/a');
    expect(new Map(store.indexValues('ns'))).toEqual(new Map([['y', 2]]));
    store.replace(new Map());
    expect(new Map(store.indexValues('ns'))).toEqual(new Map());
  });

  it('keeps one instance of projections with the same share key, for as long as an object holds it', () => {
    const store = new ProjectionStore<{ sa: string }>({ share: (v) => v.sa });
    store.set('ns/a', { sa: 'x' });
    store.set('ns/b', { sa: 'x' });
    expect(store.get('ns/b')).toBe(store.get('ns/a'));
    store.delete('ns/a');
    store.delete('ns/b');
    const fresh = { sa: 'x' };
    store.set('ns/c', fresh);
    expect(store.get('ns/c')).toBe(fresh); // the last holder went: not the old instance
    store.set('ns/c', { sa: 'y' });
    store.set('ns/d', { sa: 'x' });
    expect(store.get('ns/d')).not.toBe(fresh);
  });

  it('hands back the typed value an entry carries, for as long as a projection carries its key', () => {
    type Pod = { ns: string; sa: string; state: 'current' | 'outdated' };
    const index = (p: Pod): Array<IndexEntry<{ namespace: string; state: Pod['state'] }>> => [[`agents ${p.ns}`, p.state, { namespace: p.ns, state: p.state }], [p.ns, p.sa]];
    const store = new ProjectionStore<Pod, { namespace: string; state: Pod['state'] }>({ index });
    store.set('ns/a', { ns: 'ns', sa: 'x', state: 'current' });
    store.set('ns/b', { ns: 'ns', sa: 'y', state: 'current' });
    store.set('ns/c', { ns: 'ns', sa: 'y', state: 'outdated' });
    expect([...store.indexValues('agents ns')]).toEqual([
      [{ namespace: 'ns', state: 'current' }, 2],
      [{ namespace: 'ns', state: 'outdated' }, 1],
    ]);
    expect([...store.indexValues('ns')]).toEqual([]); // its entries carry no value
    store.set('ns/c', { ns: 'ns', sa: 'y', state: 'current' });
    expect([...store.indexValues('agents ns')]).toEqual([[{ namespace: 'ns', state: 'current' }, 3]]);
    store.replace(new Map());
    expect([...store.indexValues('agents ns')]).toEqual([]);
  });

  it('indexes exactly what its projections carry, whatever the order of sets, deletes and relists', () => {
    type P = { group: 'a' | 'b'; key: 'x' | 'y' | 'z' };
    const projection = fc.record({ group: fc.constantFrom('a' as const, 'b' as const), key: fc.constantFrom('x' as const, 'y' as const, 'z' as const) });
    const name = fc.constantFrom('o1', 'o2', 'o3', 'o4');
    const op = fc.oneof(
      fc.record({ set: name, value: fc.option(projection, { nil: undefined }) }),
      fc.record({ del: name }),
      fc.record({ relist: fc.dictionary(name, projection) }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 40 }), (ops) => {
        const index = (p: P): Array<IndexEntry<P>> => [[p.group, p.key, p], ['all', p.key]];
        const store = new ProjectionStore<P, P>({ index, share: (p) => `${p.group}/${p.key}` });
        for (const o of ops) {
          if ('set' in o) store.set(o.set, o.value);
          else if ('del' in o) store.delete(o.del);
          else store.replace(new Map(Object.entries(o.relist)));
        }
        for (const group of ['a', 'b'] as const) {
          const want = new Map<string, number>();
          for (const [, p] of store.entries()) if (p.group === group) want.set(p.key, (want.get(p.key) ?? 0) + 1);
          expect(new Map([...store.indexValues(group)].map(([p, n]) => [p.key, n]))).toEqual(want);
          for (const [p] of store.indexValues(group)) expect(p.group).toBe(group);
        }
        expect([...store.indexKeys('all')].sort()).toEqual([...new Set(store.entries().map(([, p]) => p.key))].sort());
        expect([...store.indexValues('all')]).toEqual([]);
      }),
    );
  });
});
