import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type BindingObject, sameRules } from '../desired/rbac-objects.js';
import { normalizeRevoked, type RevokedSubjects, subjectKey } from '../desired/subjects.js';
import type { ObservedBinding, ObservedProfile } from './observed-profile.js';
import { planNamespace, planProfile, type PlanAction } from './plan-profile.js';
import { crb, inNamespace, observed, OWN_ROLE, PROFILE, RBAC, sa } from './testing/observed.js';

const NAMESPACES = ['a', 'b', 'c', 'kube-system', 'unlabelled'];
const NAMES = ['default', 'x', 'y', 'z'];

const namesArb = fc.uniqueArray(fc.constantFrom(...NAMES), { maxLength: NAMES.length });
const liveArb = fc.dictionary(fc.constantFrom(...NAMESPACES), namesArb.filter((n) => n.length > 0)).map((d) => new Map(Object.entries(d)));
const bindingArb: fc.Arbitrary<ObservedBinding> = fc.oneof(
  fc.tuple(fc.constantFrom(...NAMESPACES), namesArb).map(([ns, names]) => crb(ns, names)),
  // The single binding of earlier versions, holding several namespaces.
  fc.array(fc.tuple(fc.constantFrom(...NAMESPACES), fc.constantFrom(...NAMES)), { maxLength: 6 }).map((pairs) => ({
    kind: 'ClusterRoleBinding' as const,
    name: RBAC.binding.name,
    namespace: undefined,
    roleRef: RBAC.clusterRole,
    resourceVersion: '2',
    subjects: [...new Map(pairs.map(([ns, n]) => [`${ns}/${n}`, sa(ns, n)])).values()],
    untidy: false,
  })),
  fc.tuple(fc.constantFrom(...NAMESPACES), namesArb).map(([ns, names]) => ({ ...crb(ns, names), roleRef: 'another-role' })),
  fc.tuple(fc.constantFrom(...NAMESPACES), namesArb).map(([ns, names]) => ({ ...crb(ns, names), untidy: true })),
  // Listing ServiceAccounts removed a moment ago, each still in force or run out.
  fc.tuple(fc.constantFrom(...NAMESPACES), namesArb, fc.uniqueArray(fc.tuple(fc.constantFrom(...NAMES), fc.constantFrom(999_000, 1_000_000, 1_001_000)), { minLength: 1, selector: ([n]) => n })).map(([ns, names, revoked]) => ({
    ...crb(ns, names),
    revoked: normalizeRevoked(revoked.map(([n, untilMs]) => ({ ...sa(ns, n), untilMs }))),
  })),
);
const bindingsArb = fc.uniqueArray(bindingArb, { maxLength: 6, selector: (b) => b.name });
const roleArb = fc.constantFrom(OWN_ROLE, undefined, { ...OWN_ROLE, rules: [] }, { ...OWN_ROLE, ownedBy: undefined }, { ...OWN_ROLE, ownedBy: 'another-profile' });

const observedArb: fc.Arbitrary<ObservedProfile> = fc
  .record({
    inForce: fc.boolean(),
    role: roleArb,
    bindings: bindingsArb,
    live: liveArb,
    sharing: fc.oneof({ weight: 3, arbitrary: fc.constant(new Map<string, string[]>()) }, { weight: 1, arbitrary: liveArb }),
    viewComplete: fc.boolean(),
    guard: fc.constantFrom(undefined, undefined, 'exec guard not in force'),
    gone: fc.array(fc.tuple(fc.constantFrom(...NAMESPACES), fc.constantFrom(...NAMES), fc.integer({ min: 900_000, max: 1_000_000 })), { maxLength: 8 }),
    max: fc.integer({ min: 1, max: 4 }),
  })
  .map(({ inForce, role, bindings, live, sharing, viewComplete, guard, gone, max }) =>
    observed({ profile: inForce ? PROFILE : undefined, role, bindings, live, sharing, viewComplete, execGuardProblem: guard, goneSince: memory(gone), maxPerNamespace: max }),
  );

/** The planner's memory per namespace, from (namespace, name, since) triples. */
function memory(gone: readonly (readonly [string, string, number])[]): Map<string, Map<string, number>> {
  const byNamespace = new Map<string, Map<string, number>>();
  for (const [ns, name, since] of gone) byNamespace.set(ns, (byNamespace.get(ns) ?? new Map<string, number>()).set(`${ns}/${name}`, since));
  return byNamespace;
}

const writes = (actions: readonly PlanAction[]) => actions.flatMap((a) => (a.type === 'writeBinding' ? [a] : []));
const id = (kind: string, name: string, namespace: string | undefined) => `${kind}|${kind === 'RoleBinding' ? namespace : ''}|${name}`;

/** The bindings after each action, as the API server would hold them. */
function* afterEachAction(o: ObservedProfile, actions: readonly PlanAction[]): Generator<Map<string, ObservedBinding>> {
  const state = new Map(o.bindings.map((b) => [id(b.kind, b.name, b.namespace), b]));
  for (const action of actions) {
    if (action.type === 'writeBinding') {
      const { kind, metadata, roleRef, subjects } = action.object;
      const namespace = kind === 'RoleBinding' ? metadata.namespace : metadata.labels['outrigger.dev/namespace'];
      const revoked = revokedOf(action.object);
      state.set(id(kind, metadata.name, metadata.namespace), { kind, name: metadata.name, namespace, roleRef: roleRef.name, resourceVersion: 'written', subjects, untidy: false, ...(revoked ? { revoked } : {}) });
    }
    if (action.type === 'shrinkBinding') {
      const { revoked: _earlier, ...binding } = action.binding;
      const revoked = revokedOf(action.object);
      state.set(id(binding.kind, binding.name, undefined), { ...binding, resourceVersion: 'written', subjects: action.object.subjects, untidy: false, ...(revoked ? { revoked } : {}) });
    }
    if (action.type === 'deleteBinding') state.delete(id(action.binding.kind, action.binding.name, action.binding.namespace));
    yield state;
  }
}

/** The revoked list a written binding carries, read back as the watch reads it. */
function revokedOf(object: BindingObject): RevokedSubjects | undefined {
  const list = object.metadata.annotations?.['outrigger.dev/revoked'];
  const until = object.metadata.annotations?.['outrigger.dev/revoked-until'];
  if (!list || !until) return undefined;
  const dates = until.split(' ').map(Number);
  expect(dates.length).toBe(list.split(' ').length);
  return list.split(' ').map((e, i) => ({ ...sa(e.slice(0, e.indexOf('/')), e.slice(e.indexOf('/') + 1)), untilMs: dates[i] as number }));
}

/** The plan's order, and each step's actions reversed (the executor performs a step's actions in parallel). */
function stepOrders(actions: readonly PlanAction[]): PlanAction[][] {
  const step = (a: PlanAction) => (a.type === 'createClusterRole' || a.type === 'applyClusterRole' ? 0 : a.type === 'writeBinding' ? 1 : 2);
  const reversed = [0, 1, 2].flatMap((n) => actions.filter((a) => step(a) === n).reverse());
  return [[...actions], reversed];
}

const boundToOurRole = (bindings: Iterable<ObservedBinding>) => new Set([...bindings].filter((b) => b.roleRef === RBAC.clusterRole).flatMap((b) => b.subjects.map(subjectKey)));
const liveKeys = (o: ObservedProfile) => new Set([...o.live].flatMap(([ns, names]) => names.map((n) => `${ns}/${n}`)));

describe('planProfile invariants', () => {
  it('never binds a role Outrigger does not own, or one whose rules differ from the profile', () => {
    fc.assert(
      fc.property(observedArb, (o) => {
        // A write that empties a binding (its subjects listed as revoked) grants nothing.
        for (const w of writes(planProfile(o).actions).filter((a) => a.object.subjects.length > 0)) {
          expect(w.object.roleRef.name).toBe(RBAC.clusterRole);
          expect(o.role?.ownedBy).toBe(o.name);
          expect(sameRules(o.role?.rules, RBAC.rules)).toBe(true);
        }
      }),
    );
  });

  it('writes over or deletes a binding only as the watch showed it (its version a precondition), and creates only what the watch does not show', () => {
    fc.assert(
      fc.property(observedArb, (o) => {
        const shown = new Map(o.bindings.map((b) => [id(b.kind, b.name, b.namespace), b]));
        for (const a of planProfile(o).actions) {
          if (a.type === 'writeBinding') {
            const { kind, metadata } = a.object;
            const stored = shown.get(id(kind, metadata.name, metadata.namespace));
            expect(a.binding).toBe(stored);
          }
          if (a.type === 'shrinkBinding' || a.type === 'deleteBinding') expect(o.bindings).toContain(a.binding);
        }
      }),
    );
  });

  it('adds a subject only for a live agent in a labelled, unprotected namespace', () => {
    fc.assert(
      fc.property(observedArb, (o) => {
        const bound = boundToOurRole(o.bindings);
        const live = liveKeys(o);
        for (const w of writes(planProfile(o).actions)) {
          for (const s of w.object.subjects) {
            if (bound.has(subjectKey(s))) continue;
            expect(live.has(subjectKey(s))).toBe(true);
            expect(o.labelledNamespaces.has(s.namespace) && !o.protectedNamespaces.includes(s.namespace)).toBe(true);
          }
        }
      }),
    );
  });

  it("never leaves bound a ServiceAccount one of whose pods shares the agent's token, whatever its other pods", () => {
    fc.assert(
      fc.property(observedArb, (o) => {
        const sharing = new Set([...o.sharing].flatMap(([ns, names]) => names.map((n) => `${ns}/${n}`)));
        const granted = planProfile(o).actions.flatMap((a) => (a.type === 'writeBinding' || a.type === 'shrinkBinding' ? a.object.subjects : []));
        expect(granted.map(subjectKey).filter((k) => sharing.has(k))).toEqual([]);
        for (const namespace of NAMESPACES) {
          for (const w of writes(planNamespace(inNamespace(o, namespace), namespace)?.actions ?? [])) expect(w.object.subjects.map(subjectKey).filter((k) => sharing.has(k))).toEqual([]);
        }
      }),
    );
  });

  it('keeps each namespace in its own object, within the cap', () => {
    fc.assert(
      fc.property(observedArb, (o) => {
        for (const w of writes(planProfile(o).actions)) {
          const namespace = w.object.metadata.namespace ?? w.object.metadata.labels['outrigger.dev/namespace'];
          expect(w.object.subjects.every((s) => s.namespace === namespace)).toBe(true);
          expect(w.object.subjects.length).toBeLessThanOrEqual(o.maxPerNamespace);
          expect(w.object.metadata.name).toBe(w.object.kind === 'RoleBinding' ? RBAC.binding.name : `${RBAC.binding.name}.${namespace}`);
        }
      }),
    );
  });

  it('never leaves a ServiceAccount it keeps bound unbound in between (create before empty)', () => {
    fc.assert(
      fc.property(observedArb, (o) => {
        const plan = planProfile(o);
        if (plan.roleState === 'foreign' || (o.execGuardProblem !== undefined && o.profile)) return; // revoked at once, on purpose
        const before = boundToOurRole(o.bindings);
        const states = [...afterEachAction(o, plan.actions)];
        const after = states.length ? boundToOurRole(states[states.length - 1]?.values() ?? []) : before;
        const kept = [...before].filter((k) => after.has(k));
        for (const state of states) {
          const bound = boundToOurRole(state.values());
          for (const k of kept) expect(bound.has(k)).toBe(true);
        }
      }),
    );
  });

  it('keeps whoever a binding holds or lists in force judged by the exec guard at every step, in any order within a step, and lists what it removes for revokedKeepMs, dropping what ran out', () => {
    fc.assert(
      fc.property(observedArb, (o) => {
        const plan = planProfile(o);
        const judged = (bindings: Iterable<ObservedBinding>) =>
          new Set([...bindings].flatMap((b) => [...b.subjects, ...(b.revoked ?? []).filter((e) => e.untilMs > o.nowMs)].map(subjectKey)));
        const before = judged(o.bindings);
        for (const actions of stepOrders(plan.actions)) {
          for (const state of afterEachAction(o, actions)) {
            const now = judged(state.values());
            for (const k of before) expect(now.has(k), k).toBe(true);
          }
        }
        // What a write takes out of a binding it lists, unless the watch shows it bound in another.
        for (const a of plan.actions) {
          if (a.type !== 'writeBinding' && a.type !== 'shrinkBinding') continue;
          const key = id(a.object.kind, a.object.metadata.name, a.object.metadata.namespace);
          const stored = o.bindings.find((b) => id(b.kind, b.name, b.namespace) === key);
          const elsewhere = new Set(o.bindings.filter((b) => b !== stored).flatMap((b) => b.subjects.map(subjectKey)));
          const after = new Set(a.object.subjects.map(subjectKey));
          const listed = revokedOf(a.object);
          // Entries past their date go with any write, so a list holds only what was removed within revokedKeepMs.
          for (const e of listed ?? []) expect(e.untilMs, subjectKey(e)).toBeGreaterThan(o.nowMs);
          for (const s of stored?.subjects ?? []) {
            if (after.has(subjectKey(s)) || elsewhere.has(subjectKey(s))) continue;
            expect(listed?.find((e) => subjectKey(e) === subjectKey(s))?.untilMs, subjectKey(s)).toBe(o.nowMs + o.revokedKeepMs);
          }
        }
      }),
    );
  });

  it('lets a binding of an earlier version only lose subjects, and keep none that no namespace binds any more', () => {
    fc.assert(
      fc.property(observedArb, (o) => {
        const plan = planProfile(o);
        for (const a of plan.actions) {
          if (a.type !== 'shrinkBinding') continue;
          const before = new Set(a.binding.subjects.map(subjectKey));
          expect(a.object.subjects.every((s) => before.has(subjectKey(s)))).toBe(true);
          // Emptied, it stays only to list whom it held.
          if (a.object.subjects.length === 0) expect(revokedOf(a.object)?.length).toBeGreaterThan(0);
          expect(a.object.metadata.name).toBe(a.binding.name);
          expect(a.object.roleRef.name).toBe(a.binding.roleRef);
          // What it drops, either the watch shows bound in its namespace's binding, or no binding this plan writes holds.
          const watched = new Set(o.bindings.filter((b) => b.namespace !== undefined).flatMap((b) => b.subjects.map(subjectKey)));
          const bound = new Set(writes(plan.actions).flatMap((w) => w.object.subjects.map(subjectKey)));
          const kept = new Set(a.object.subjects.map(subjectKey));
          for (const s of a.binding.subjects) if (!kept.has(subjectKey(s)) && !watched.has(subjectKey(s))) expect(bound.has(subjectKey(s))).toBe(false);
        }
      }),
    );
  });

  it('revokes everything at once for a foreign role, or a cluster-wide profile without the exec guard: every binding emptied or deleted', () => {
    fc.assert(
      fc.property(observedArb, (o) => {
        const plan = planProfile(o);
        const revoke = (o.profile && o.role && o.role.ownedBy !== o.name) || (o.profile && o.execGuardProblem !== undefined);
        if (!revoke) return;
        const final = [...afterEachAction(o, plan.actions)].at(-1) ?? new Map(o.bindings.map((b) => [id(b.kind, b.name, b.namespace), b]));
        expect([...final.values()].flatMap((b) => b.subjects)).toEqual([]);
      }),
    );
  });

  it('converges: acting on the plan and planning again changes nothing within three rounds, and again once the lists it wrote have run out', () => {
    fc.assert(
      fc.property(observedArb.filter((o) => o.role?.ownedBy === o.name && sameRules(o.role.rules, RBAC.rules)), (o) => {
        const act = (current: ObservedProfile): [ObservedProfile, readonly PlanAction[]] => {
          const plan = planProfile(current);
          const states = [...afterEachAction(current, plan.actions)];
          const bindings = states.length ? [...(states[states.length - 1]?.values() ?? [])] : current.bindings;
          return [{ ...current, bindings, goneSince: plan.goneSince }, plan.actions];
        };
        let current = o;
        for (let round = 0; round < 3; round++) current = act(current)[0];
        expect(planProfile(current).actions).toEqual([]);
        // Past every grace and list (a wrong roleRef: emptied, deleted, created anew).
        current = { ...current, nowMs: o.nowMs + o.graceMs + o.revokedKeepMs + 1 };
        for (let round = 0; round < 3; round++) current = act(current)[0];
        current = { ...current, nowMs: current.nowMs + o.revokedKeepMs + 1 };
        for (let round = 0; round < 3; round++) current = act(current)[0];
        expect(planProfile(current).actions).toEqual([]);
        // With the profile in force and every pod seen, no binding of an earlier version outlives the move.
        if (o.profile && o.viewComplete) expect(current.bindings.filter((b) => b.namespace === undefined)).toEqual([]);
      }),
    );
  });

  it('plans each namespace alone exactly as the whole profile plans it', () => {
    fc.assert(
      fc.property(observedArb, (o) => {
        const whole = planProfile(o);
        for (const namespace of NAMESPACES) {
          const alone = planNamespace(inNamespace(o, namespace), namespace);
          if (whole.roleState === 'repairing' || whole.roleState === 'foreign' || (o.profile && o.execGuardProblem !== undefined)) {
            expect(alone).toBeUndefined(); // the profile step revokes or repairs, for every namespace at once
            continue;
          }
          const planned = whole.namespaces.get(namespace);
          if (planned) expect(alone).toEqual(planned);
          else expect(alone).toMatchObject({ actions: [], subjects: 0, overCap: undefined, wakeAtMs: undefined });
        }
      }),
    );
  });

  it('is, for the whole profile, the namespaces\' plans together and the removal of the bindings of earlier versions', () => {
    fc.assert(
      fc.property(observedArb, (o) => {
        const whole = planProfile(o);
        if (whole.roleState === 'repairing' || whole.roleState === 'foreign' || (o.profile && o.execGuardProblem !== undefined)) return;
        const alone = NAMESPACES.flatMap((namespace) => planNamespace(inNamespace(o, namespace), namespace)?.actions ?? []);
        const legacy = whole.actions.filter((a) => a.type === 'shrinkBinding' || (a.type === 'deleteBinding' && a.binding.namespace === undefined));
        expect(new Set([...alone, ...legacy].map((a) => JSON.stringify(a)))).toEqual(new Set(whole.actions.map((a) => JSON.stringify(a))));
        expect(alone.length + legacy.length).toBe(whole.actions.length);
      }),
    );
  });
});
