import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { NamespaceStates, type NamespaceState } from './namespace-states.js';

const state = (over: Partial<NamespaceState> = {}): NamespaceState => ({ goneSince: new Map(), subjects: 1, overCap: undefined, notOurs: [], ...over });

describe('NamespaceStates', () => {
  it('knows a profile only once it was planned as a whole', () => {
    const states = new NamespaceStates();
    expect(states.has('p')).toBe(false);
    states.replace('p', new Map());
    expect(states.has('p')).toBe(true);
    states.clear();
    expect(states.has('p')).toBe(false);
  });

  it('sums what the status says over the namespaces, and says when one namespace changed it', () => {
    const states = new NamespaceStates();
    states.replace('p', new Map([['a', state({ subjects: 2 })], ['b', state({ subjects: 3, overCap: 7 })]]));
    expect(states.tally('p')).toEqual({ subjects: 5, overCap: new Map([['b', 7]]), notOurs: [] });
    expect(states.set('p', 'a', state({ subjects: 2, goneSince: new Map([['a/x', 5]]) }))).toBe('nothing'); // only the memory moved
    expect(states.set('p', 'a', state({ subjects: 1 }))).toBe('subjects');
    expect(states.set('p', 'c', state({ subjects: 0, notOurs: ['ClusterRoleBinding b.c'] }))).toBe('conditions');
    expect(states.tally('p')).toEqual({ subjects: 4, overCap: new Map([['b', 7]]), notOurs: ['ClusterRoleBinding b.c'] });
    expect(states.tally('other')).toEqual({ subjects: 0, overCap: new Map(), notOurs: [] });
    expect([states.subjects('p'), states.subjects('other')]).toEqual([4, 0]);
  });

  it("hands each namespace's memory back to its next plan, and forgets namespaces left empty", () => {
    const states = new NamespaceStates();
    const memory = new Map([['a/x', 5]]);
    states.replace('p', new Map([['a', state({ goneSince: memory })], ['b', state()], ['c', state({ subjects: 0 })]]));
    expect(states.goneSince('p', 'a')).toEqual(new Map([['a', memory]]));
    expect(states.goneSince('p', 'b')).toEqual(new Map());
    expect(states.goneSince('p')).toEqual(new Map([['a', memory]]));
    states.set('p', 'a', state({ subjects: 0 }));
    expect(states.goneSince('p')).toEqual(new Map());
    expect(states.tally('p').subjects).toBe(1);
  });

  it('keeps its sums and memories equal to those of the namespaces last planned, whatever the order of plans', () => {
    const namespaces = ['a', 'b', 'c', 'd'];
    const stateArb: fc.Arbitrary<NamespaceState> = fc.record({
      goneSince: fc.constantFrom(new Map<string, number>(), new Map([['x', 1]])),
      subjects: fc.nat(3),
      overCap: fc.option(fc.nat(9), { nil: undefined }),
      notOurs: fc.constantFrom([], ['ClusterRoleBinding n'], ['RoleBinding n', 'RoleBinding m']),
    });
    const stepArb = fc.oneof(
      fc.record({ namespace: fc.constantFrom(...namespaces), state: stateArb }),
      fc.dictionary(fc.constantFrom(...namespaces), stateArb).map((d) => new Map(Object.entries(d))),
    );
    fc.assert(
      fc.property(fc.array(stepArb, { maxLength: 30 }), (steps) => {
        const states = new NamespaceStates();
        let model = new Map<string, NamespaceState>();
        for (const step of steps) {
          if (step instanceof Map) {
            states.replace('p', step);
            model = new Map(step);
          } else {
            const before = model.get(step.namespace);
            const changed = states.set('p', step.namespace, step.state);
            model.set(step.namespace, step.state);
            const conditions = (s: NamespaceState | undefined) => JSON.stringify([s?.overCap, s?.notOurs ?? []]);
            const expected = conditions(before) !== conditions(step.state) ? 'conditions' : (before?.subjects ?? 0) !== step.state.subjects ? 'subjects' : 'nothing';
            expect(changed).toBe(expected);
          }
          const entries = [...model];
          const tally = states.tally('p');
          expect(tally.subjects).toBe(entries.reduce((n, [, s]) => n + s.subjects, 0));
          expect(states.subjects('p')).toBe(tally.subjects);
          expect(tally.overCap).toEqual(new Map(entries.flatMap(([ns, s]) => (s.overCap === undefined ? [] : [[ns, s.overCap] as const]))));
          expect([...tally.notOurs].sort()).toEqual(entries.flatMap(([, s]) => s.notOurs).sort());
          expect(states.goneSince('p')).toEqual(new Map(entries.filter(([, s]) => s.goneSince.size > 0).map(([ns, s]) => [ns, s.goneSince])));
          for (const ns of namespaces) expect(states.goneSince('p', ns)).toEqual(new Map((model.get(ns)?.goneSince.size ?? 0) > 0 ? [[ns, model.get(ns)?.goneSince]] : []));
        }
      }),
    );
  });
});
