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
    expect(states.set('p', 'a', state({ subjects: 2, goneSince: new Map([['a/x', 5]]) }))).toBe(false); // only the memory moved
    expect(states.set('p', 'a', state({ subjects: 1 }))).toBe(true);
    expect(states.set('p', 'c', state({ subjects: 0, notOurs: ['ClusterRoleBinding b.c'] }))).toBe(true);
    expect(states.tally('p')).toEqual({ subjects: 4, overCap: new Map([['b', 7]]), notOurs: ['ClusterRoleBinding b.c'] });
    expect(states.tally('other')).toEqual({ subjects: 0, overCap: new Map(), notOurs: [] });
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
});
