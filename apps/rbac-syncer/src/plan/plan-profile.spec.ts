import { describe, expect, it } from 'vitest';
import type { SaSubject } from '../desired/subjects.js';
import { planNamespace, planProfile, type PlanAction, REVOKED_LIST_MAX_CHARS } from './plan-profile.js';
import { crb, inNamespace, observed, OWN_ROLE, PROFILE, RBAC, sa } from './testing/observed.js';

const KEEP = observed().revokedKeepMs;

/** A revoked list: every one of `subjects` until `untilMs`. */
const listedUntil = (untilMs: number, ...subjects: SaSubject[]) => subjects.map((s) => ({ ...s, untilMs }));
/** The annotations an action writes on its binding (the revoked list). */
const listedOn = (action: PlanAction | undefined) => (action?.type === 'writeBinding' || action?.type === 'shrinkBinding' ? action.object.metadata.annotations : undefined);

const summary = (actions: readonly PlanAction[]) =>
  actions.map((a) =>
    a.type === 'writeBinding'
      ? `${a.binding ? 'write' : 'create'} ${a.object.metadata.name} ${a.object.subjects.map((s) => s.name).join(',')}`
      : a.type === 'deleteBinding'
        ? `delete ${a.binding.name}`
        : a.type === 'shrinkBinding'
          ? `shrink ${a.object.metadata.name} ${a.object.subjects.map((s) => `${s.namespace}/${s.name}`).join(',')}`
          : `${a.type} ${a.object.metadata.name}`,
  );

describe('planProfile', () => {
  it('binds each namespace in its own ClusterRoleBinding', () => {
    const plan = planProfile(observed({ live: new Map([['a', ['x', 'default']], ['b', ['default']]]) }));
    expect(summary(plan.actions)).toEqual(['create xxl-agent-exec.a default,x', 'create xxl-agent-exec.b default']);
    expect(plan.subjects).toBe(3);
    expect(plan.roleState).toBe('ready');
  });

  it('writes only the namespace that changed', () => {
    const plan = planProfile(observed({ live: new Map([['a', ['default', 'x']], ['b', ['default', 'y']]]), bindings: [crb('a', ['default', 'x']), crb('b', ['default'])] }));
    expect(summary(plan.actions)).toEqual(['write xxl-agent-exec.b default,y']);
  });

  it('deletes a namespace binding once its subjects are past the grace, and keeps them through it', () => {
    const during = planProfile(observed({ bindings: [crb('a', ['default'])], goneSince: new Map([['a', new Map([['a/default', 1_000_000 - 10_000]])]]) }));
    expect(during.actions).toEqual([]);
    expect(during.namespaces.get('a')?.wakeAtMs).toBe(1_000_000 + 50_000);
    const after = planProfile(observed({ bindings: [crb('a', ['default'])], goneSince: new Map([['a', new Map([['a/default', 1_000_000 - 60_000]])]]) }));
    // Emptied first, the ServiceAccount listed for the exec guard; deleted once that has run out.
    expect(summary(after.actions)).toEqual(['write xxl-agent-exec.a ']);
    const emptied = after.actions[0]?.type === 'writeBinding' ? after.actions[0].object : undefined;
    expect(emptied?.metadata.annotations).toEqual({ 'outrigger.dev/revoked': 'a/default', 'outrigger.dev/revoked-until': String(1_000_000 + KEEP) });
    const listed = { ...crb('a', []), revoked: listedUntil(1_000_000 + KEEP, sa('a')) };
    const meanwhile = planProfile(observed({ bindings: [listed], nowMs: 1_000_000 + KEEP - 1 }));
    expect(meanwhile.actions).toEqual([]);
    expect(meanwhile.namespaces.get('a')?.wakeAtMs).toBe(1_000_000 + KEEP);
    expect(summary(planProfile(observed({ bindings: [listed], nowMs: 1_000_000 + KEEP })).actions)).toEqual(['delete xxl-agent-exec.a']);
  });

  it('keeps the revoked list within REVOKED_LIST_MAX_CHARS: who does not fit stays bound until it has room, and a new subject gives way within the cap', () => {
    const long = (i: number) => `${i}-`.padEnd(253, 'x');
    // An entry takes its name (255), its date (7) and two separators: one more fits, not two.
    const earlier = listedUntil(1_000_000 + 1_000, ...Array.from({ length: Math.floor(REVOKED_LIST_MAX_CHARS / 264) - 1 }, (_, i) => sa('a', long(i))));
    const leaving = [long(1000), long(1001)];
    const plan = planProfile(
      observed({
        live: new Map([['a', ['default', 'new']]]),
        bindings: [{ ...crb('a', ['default', ...leaving]), revoked: earlier }],
        goneSince: new Map([['a', new Map(leaving.map((n) => [`a/${n}`, 0]))]]),
        maxPerNamespace: 2,
      }),
    );
    const written = plan.actions[0]?.type === 'writeBinding' ? plan.actions[0].object : undefined;
    expect(written?.subjects.map((s) => s.name)).toEqual([long(1001), 'default']);
    const listed = written?.metadata.annotations?.['outrigger.dev/revoked'] ?? '';
    const dates = written?.metadata.annotations?.['outrigger.dev/revoked-until'] ?? '';
    expect(listed.length + dates.length).toBeLessThanOrEqual(REVOKED_LIST_MAX_CHARS);
    expect(listed.split(' ')).toContain(`a/${long(1000)}`);
    expect(plan.removedBecause.has(`a/${long(1001)}`)).toBe(false);
    // The list as a whole runs out with its latest entry: REVOKED_KEEP after the last removal.
    expect(plan.namespaces.get('a')?.wakeAtMs).toBe(1_000_000 + KEEP);
    // Once the earlier entries are past their date they make room, without a write of their own.
    const later = planProfile(
      observed({
        live: new Map([['a', ['default']]]),
        bindings: [{ ...crb('a', [long(1001), 'default']), revoked: [...earlier, ...listedUntil(1_000_000 + KEEP, sa('a', long(1000)))] }],
        goneSince: new Map([['a', new Map([[`a/${long(1001)}`, 0]])]]),
        maxPerNamespace: 2,
        nowMs: 1_000_000 + 1_000,
      }),
    );
    expect(summary(later.actions)).toEqual(['write xxl-agent-exec.a default']);
    expect(listedOn(later.actions[0])?.['outrigger.dev/revoked']).toBe(`a/${long(1000)} a/${long(1001)}`);
  });

  it('lists a ServiceAccount it removes from a binding as revoked, and keeps the others listed until theirs runs out', () => {
    const earlier = listedUntil(1_000_000 + 1_000, sa('a', 'x'));
    const plan = planProfile(observed({ live: new Map([['a', ['default']]]), bindings: [{ ...crb('a', ['default', 'y']), revoked: earlier }], goneSince: new Map([['a', new Map([['a/y', 0]])]]) }));
    const written = plan.actions[0]?.type === 'writeBinding' ? plan.actions[0].object : undefined;
    expect(written?.subjects).toEqual([sa('a')]);
    expect(written?.metadata.annotations).toEqual({ 'outrigger.dev/revoked': 'a/x a/y', 'outrigger.dev/revoked-until': `${1_000_000 + 1_000} ${1_000_000 + KEEP}` });
    expect(plan.namespaces.get('a')?.wakeAtMs).toBe(1_000_000 + KEEP);
    // Each entry keeps its own date: a/x past its own is no reason for a write, and goes with the next.
    const both = { ...crb('a', ['default']), revoked: [...earlier, ...listedUntil(1_000_000 + KEEP, sa('a', 'y'))] };
    const xOut = planProfile(observed({ live: new Map([['a', ['default']]]), bindings: [both], nowMs: 1_000_000 + 2_000 }));
    expect(xOut.actions).toEqual([]);
    expect(xOut.namespaces.get('a')?.wakeAtMs).toBe(1_000_000 + KEEP);
    const added = planProfile(observed({ live: new Map([['a', ['default', 'z']]]), bindings: [both], nowMs: 1_000_000 + 2_000 }));
    expect(listedOn(added.actions[0])).toEqual({ 'outrigger.dev/revoked': 'a/y', 'outrigger.dev/revoked-until': String(1_000_000 + KEEP) });
    // Bound again: no longer listed. Run out: the list goes with the next write.
    const rebound = planProfile(observed({ live: new Map([['a', ['default', 'x']]]), bindings: [{ ...crb('a', ['default']), revoked: earlier }] }));
    expect(summary(rebound.actions)).toEqual(['write xxl-agent-exec.a default,x']);
    expect(rebound.actions[0]?.type === 'writeBinding' ? rebound.actions[0].object.metadata.annotations : 'no write').toBeUndefined();
    const expired = planProfile(observed({ live: new Map([['a', ['default']]]), bindings: [{ ...crb('a', ['default']), revoked: earlier }], nowMs: 1_000_000 + 1_000 }));
    expect(summary(expired.actions)).toEqual(['write xxl-agent-exec.a default']);
    expect(expired.actions[0]).toMatchObject({ listRanOut: true });
    expect(expired.actions[0]?.type === 'writeBinding' ? expired.actions[0].object.metadata : undefined).not.toHaveProperty('annotations');
  });

  it('creates the ClusterRole first and binds nothing until the watch shows it right', () => {
    const missing = planProfile(observed({ role: undefined, live: new Map([['a', ['default']]]) }));
    expect(summary(missing.actions)).toEqual(['createClusterRole xxl-agent-exec']);
    expect(missing.roleState).toBe('repairing');
    const drifted = planProfile(observed({ role: { ...OWN_ROLE, rules: [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }] }, live: new Map([['a', ['default']]]), bindings: [crb('a', ['default'])] }));
    expect(summary(drifted.actions)).toEqual(['applyClusterRole xxl-agent-exec']);
  });

  it('binds nothing to a ClusterRole that is not Outrigger\'s: empties every binding at once, listing whom each held, and deletes them once the lists run out', () => {
    for (const ownedBy of [undefined, 'another-profile']) {
      const role = { name: RBAC.clusterRole, ownedBy, rules: [] };
      const plan = planProfile(observed({ role, live: new Map([['a', ['default']]]), bindings: [crb('a', ['default']), crb('b', ['default'])] }));
      expect(plan.roleState).toBe('foreign');
      expect(summary(plan.actions)).toEqual(['write xxl-agent-exec.a ', 'write xxl-agent-exec.b ']);
      expect(listedOn(plan.actions[1])).toEqual({ 'outrigger.dev/revoked': 'b/default', 'outrigger.dev/revoked-until': String(1_000_000 + KEEP) });
      expect(plan.subjects).toBe(0);
      expect(plan.wakeAtMs).toBe(1_000_000 + KEEP);
      const emptied = ['a', 'b'].map((ns) => ({ ...crb(ns, []), revoked: listedUntil(1_000_000 + KEEP, sa(ns)) }));
      expect(planProfile(observed({ role, live: new Map([['a', ['default']]]), bindings: emptied })).actions).toEqual([]);
      const later = planProfile(observed({ role, live: new Map([['a', ['default']]]), bindings: emptied, nowMs: 1_000_000 + KEEP }));
      expect(summary(later.actions)).toEqual(['delete xxl-agent-exec.a', 'delete xxl-agent-exec.b']);
    }
  });

  it('empties every cluster-wide binding at once while the exec guard is not in force, a binding of an earlier version too', () => {
    const legacy = { kind: 'ClusterRoleBinding' as const, name: RBAC.binding.name, namespace: undefined, roleRef: RBAC.clusterRole, resourceVersion: '7', subjects: [sa('b')], untidy: false };
    const plan = planProfile(observed({ execGuardProblem: 'exec guard not in force', live: new Map([['a', ['default']]]), bindings: [crb('a', ['default']), legacy] }));
    expect(summary(plan.actions)).toEqual(['write xxl-agent-exec.a ', 'shrink xxl-agent-exec ']);
    expect(listedOn(plan.actions[1])).toEqual({ 'outrigger.dev/revoked': 'b/default', 'outrigger.dev/revoked-until': String(1_000_000 + KEEP) });
    expect(plan.removedBecause.get('a/default')).toBe('exec guard not in force');
  });

  it('stops a grant that must stop even when one binding\'s list cannot hold everyone: as many as fit are listed', () => {
    const names = Array.from({ length: 600 }, (_, i) => `${'n'.repeat(250)}-${i}`);
    const plan = planProfile(observed({ execGuardProblem: 'exec guard not in force', bindings: [crb('a', names)] }));
    expect(summary(plan.actions)).toEqual(['write xxl-agent-exec.a ']);
    const listed = listedOn(plan.actions[0])?.['outrigger.dev/revoked'] ?? '';
    expect(listed.length).toBeLessThanOrEqual(REVOKED_LIST_MAX_CHARS);
    expect(listed.split(' ').length).toBeGreaterThan(400);
  });

  it('caps one namespace without touching another, keeping those bound first', () => {
    const greedy = Array.from({ length: 5 }, (_, i) => `sa-${i}`);
    const plan = planProfile(observed({ maxPerNamespace: 3, live: new Map([['a', greedy], ['b', ['default']]]), bindings: [crb('a', ['sa-4'])] }));
    expect(summary(plan.actions)).toEqual(['write xxl-agent-exec.a sa-0,sa-1,sa-4', 'create xxl-agent-exec.b default']);
    expect(plan.overCap).toEqual(new Map([['a', 5]]));
  });

  it('moves from the single binding of earlier versions without a gap: create first, delete once the watch shows them', () => {
    const legacy = { kind: 'ClusterRoleBinding' as const, name: RBAC.binding.name, namespace: undefined, roleRef: RBAC.clusterRole, resourceVersion: '7', subjects: [sa('a'), sa('b')], untidy: false };
    const live = new Map([['a', ['default']], ['b', ['default']]]);
    const first = planProfile(observed({ live, bindings: [legacy] }));
    expect(summary(first.actions)).toEqual(['create xxl-agent-exec.a default', 'create xxl-agent-exec.b default']);
    const halfway = planProfile(observed({ live, bindings: [legacy, crb('a', ['default'])] }));
    expect(summary(halfway.actions)).toEqual(['create xxl-agent-exec.b default']);
    const done = planProfile(observed({ live, bindings: [legacy, crb('a', ['default']), crb('b', ['default'])] }));
    expect(summary(done.actions)).toEqual(['delete xxl-agent-exec']);
  });

  it('lets a single binding that cannot go yet hold back no revocation: it loses whom no namespace binds any more', () => {
    const legacy = { kind: 'ClusterRoleBinding' as const, name: RBAC.binding.name, namespace: undefined, roleRef: RBAC.clusterRole, resourceVersion: '7', subjects: [sa('a'), sa('b', 'x'), sa('c', 'y')], untidy: false };
    // a still has its agent (its own binding not written yet); b/x lost its pods past the grace; c was unlabelled.
    const o = observed({ live: new Map([['a', ['default']]]), bindings: [legacy], goneSince: new Map([['b', new Map([['b/x', 0]])]]), labelledNamespaces: new Set(['a', 'b']) });
    expect(summary(planProfile(o).actions)).toEqual(['create xxl-agent-exec.a default', 'shrink xxl-agent-exec a/default']);
  });

  it('lets no namespace over the cap keep a single binding alive', () => {
    const names = ['sa-0', 'sa-1', 'sa-2'];
    const legacy = { kind: 'ClusterRoleBinding' as const, name: RBAC.binding.name, namespace: undefined, roleRef: RBAC.clusterRole, resourceVersion: '7', subjects: [sa('a', 'sa-0'), sa('a', 'sa-1'), sa('b')], untidy: false };
    const o = observed({ maxPerNamespace: 1, live: new Map([['a', names], ['b', ['default']]]), bindings: [legacy, crb('a', ['sa-0']), crb('b', ['default'])] });
    // a/sa-1, over the cap, is listed as it leaves; the binding goes once that has run out.
    const plan = planProfile(o);
    expect(summary(plan.actions)).toEqual(['shrink xxl-agent-exec ']);
    expect(listedOn(plan.actions[0])).toEqual({ 'outrigger.dev/revoked': 'a/sa-1', 'outrigger.dev/revoked-until': String(1_000_000 + KEEP) });
    expect(plan.wakeAtMs).toBe(1_000_000 + KEEP);
    const emptied = { ...legacy, subjects: [], revoked: listedUntil(1_000_000 + KEEP, sa('a', 'sa-1')) };
    expect(planProfile({ ...o, bindings: [emptied, crb('a', ['sa-0']), crb('b', ['default'])] }).actions).toEqual([]);
    expect(summary(planProfile({ ...o, bindings: [emptied, crb('a', ['sa-0']), crb('b', ['default'])], nowMs: 1_000_000 + KEEP }).actions)).toEqual(['delete xxl-agent-exec']);
  });

  it('empties the bindings of a profile no longer in force after the grace', () => {
    const plan = planProfile(observed({ profile: undefined, role: undefined, bindings: [crb('a', ['default'])], goneSince: new Map([['a', new Map([['a/default', 0]])]]) }));
    expect(summary(plan.actions)).toEqual(['write xxl-agent-exec.a ']);
  });

  it('replaces a binding whose roleRef is another role (roleRef cannot change): emptied and listed first, deleted once the list runs out, then written anew', () => {
    const live = new Map([['a', ['default']]]);
    const plan = planProfile(observed({ live, bindings: [{ ...crb('a', ['default']), roleRef: 'old-role' }] }));
    expect(summary(plan.actions)).toEqual(['write xxl-agent-exec.a ']);
    expect(listedOn(plan.actions[0])).toEqual({ 'outrigger.dev/revoked': 'a/default', 'outrigger.dev/revoked-until': String(1_000_000 + KEEP) });
    expect(plan.actions[0]?.type === 'writeBinding' ? plan.actions[0].object.roleRef.name : undefined).toBe('old-role');
    expect(plan.subjects).toBe(0);
    expect(plan.removedBecause.get('a/default')).toContain('refers to ClusterRole old-role, not xxl-agent-exec');
    const emptied = { ...crb('a', []), roleRef: 'old-role', revoked: listedUntil(1_000_000 + KEEP, sa('a')) };
    expect(planProfile(observed({ live, bindings: [emptied] })).actions).toEqual([]);
    expect(planProfile(observed({ live, bindings: [emptied] })).namespaces.get('a')?.wakeAtMs).toBe(1_000_000 + KEEP);
    expect(summary(planProfile(observed({ live, bindings: [emptied], nowMs: 1_000_000 + KEEP })).actions)).toEqual(['delete xxl-agent-exec.a']);
    expect(summary(planProfile(observed({ live, nowMs: 1_000_000 + KEEP })).actions)).toEqual(['create xxl-agent-exec.a default']);
  });

  it('moves to another role without a gap when the binding is renamed with it: the new one created first, the old one emptied and listed once the watch shows it', () => {
    const live = new Map([['a', ['default']]]);
    const old = { ...crb('a', ['default']), name: 'old-exec.a', roleRef: 'old-role' };
    expect(summary(planProfile(observed({ live, bindings: [old] })).actions)).toEqual(['create xxl-agent-exec.a default']);
    const moved = planProfile(observed({ live, bindings: [old, crb('a', ['default'])] }));
    expect(summary(moved.actions)).toEqual(['delete old-exec.a']);
  });

  it('uses a RoleBinding per namespace for RoleBinding profiles, and moves from ClusterRoleBindings without a gap', () => {
    const profile = { ...PROFILE, rbac: { ...RBAC, binding: { kind: 'RoleBinding' as const, name: 'xxl-agent-exec' } } };
    const plan = planProfile(observed({ profile, live: new Map([['a', ['default']]]), bindings: [crb('a', ['default'])] }));
    expect(plan.actions.map((a) => (a.type === 'writeBinding' ? [a.object.kind, a.object.metadata.namespace, a.object.metadata.name] : a.type))).toEqual([['RoleBinding', 'a', 'xxl-agent-exec']]);
  });

  it('repairs a binding edited by hand even when its ServiceAccounts are right', () => {
    const plan = planProfile(observed({ live: new Map([['a', ['default']]]), bindings: [{ ...crb('a', ['default']), untidy: true }] }));
    expect(summary(plan.actions)).toEqual(['write xxl-agent-exec.a default']);
  });

  it('plans one namespace alone from its own view, and leaves the profile step to the whole profile', () => {
    const o = observed({ live: new Map([['a', ['default', 'x']], ['b', ['default']]]), bindings: [crb('a', ['default']), crb('b', ['default'])] });
    const plan = planNamespace(inNamespace(o, 'a'), 'a');
    expect(summary(plan?.actions ?? [])).toEqual(['write xxl-agent-exec.a default,x']);
    expect(plan?.subjects).toBe(2);
    expect(summary(planNamespace(inNamespace(o, 'b'), 'b')?.actions ?? [])).toEqual([]);
    expect(planNamespace(inNamespace({ ...o, role: undefined }, 'a'), 'a')).toBeUndefined();
    expect(planNamespace(inNamespace({ ...o, execGuardProblem: 'exec guard not in force' }, 'a'), 'a')).toBeUndefined();
    expect(planNamespace(inNamespace({ ...o, role: { ...OWN_ROLE, ownedBy: undefined } }, 'a'), 'a')).toBeUndefined();
  });
});
