import { desiredSubjects } from '../desired/desired-subjects.js';
import { bindingIn, type BindingObject, type ClusterRoleObject, desiredClusterRole, type ProfileRbac, sameRules } from '../desired/rbac-objects.js';
import { diffSubjects, normalizeSubjects, type SaSubject, sameSubjects, subjectKey } from '../desired/subjects.js';
import type { ObservedBinding, ObservedProfile } from './observed-profile.js';

/** What the plan does with the profile's ClusterRole, and so whether it may bind. */
export type RoleState =
  /** The profile grants no RBAC (or none is in force). */
  | 'none'
  /** Ours, with exactly the profile's rules: bindings may be written. */
  | 'ready'
  /** Missing or drifted: created or repaired now; bindings wait for the watch to show it right. */
  | 'repairing'
  /** Exists and is not Outrigger's for this profile: nothing is bound to it, ever. */
  | 'foreign';

export type PlanAction =
  | { readonly type: 'createClusterRole'; readonly object: ClusterRoleObject }
  | { readonly type: 'applyClusterRole'; readonly object: ClusterRoleObject }
  /** `create`: the watch does not show it (POST, so an object of that name that is not ours is never taken over). */
  | { readonly type: 'writeBinding'; readonly object: BindingObject; readonly create: boolean; readonly before: readonly SaSubject[] }
  | { readonly type: 'deleteBinding'; readonly binding: ObservedBinding; readonly why: string };

export interface ProfilePlan {
  /** In order: the role, then binding writes (creates before the deletes they make safe), then deletes. */
  readonly actions: readonly PlanAction[];
  readonly roleState: RoleState;
  /** ServiceAccounts bound once the plan is done. */
  readonly subjects: number;
  /** Namespaces with more ServiceAccounts than the cap, and how many they have. */
  readonly overCap: ReadonlyMap<string, number>;
  /** Why each removed subject goes, by subjectKey. */
  readonly removedBecause: ReadonlyMap<string, string>;
  readonly goneSince: Map<string, number>;
  /** When to look again (a grace running out), epoch ms. */
  readonly wakeAtMs: number | undefined;
}

/**
 * One profile's plan: pure, from what the stores show to the writes that make it right.
 * Invariants (property-tested in plan-profile.property.spec.ts):
 * - a binding is written only to the ClusterRole Outrigger owns for this profile, holding exactly its rules;
 * - a subject is added only for a live pod that carries the agent as injected;
 * - each binding holds one namespace's ServiceAccounts, at most the cap of them;
 * - a binding is deleted only when the subjects it holds that are still wanted are bound elsewhere (create before empty),
 *   or at once when its grant must stop (a foreign role, no exec guard).
 */
export function planProfile(o: ObservedProfile): ProfilePlan {
  const rbac = o.profile?.rbac;
  const roleState = stateOfRole(o, rbac);
  const actions: PlanAction[] = [];
  if (rbac && roleState === 'repairing') {
    const object = desiredClusterRole(o.name, rbac);
    actions.push(o.role ? { type: 'applyClusterRole', object } : { type: 'createClusterRole', object });
  }
  const revokeWhy = roleState === 'foreign' ? `ClusterRole ${rbac?.clusterRole} is not Outrigger's` : rbac?.binding.kind === 'ClusterRoleBinding' ? o.execGuardProblem : undefined;
  if (revokeWhy !== undefined) return revokeAll(o, roleState, revokeWhy);
  // While the role is being repaired nothing is bound to it: the next reconcile follows the watch.
  if (roleState === 'repairing') return { actions, roleState, subjects: countSubjects(o.bindings), overCap: new Map(), removedBecause: new Map(), goneSince: new Map(o.goneSince), wakeAtMs: undefined };

  const current = normalizeSubjects(o.bindings.flatMap((b) => b.subjects));
  const live: SaSubject[] = rbac ? [...o.live].flatMap(([namespace, names]) => names.map((name) => ({ kind: 'ServiceAccount' as const, namespace, name }))) : [];
  const wanted = desiredSubjects({
    profile: o.name,
    live,
    labelledNamespaces: o.labelledNamespaces,
    protectedNamespaces: o.protectedNamespaces,
    current,
    goneSince: o.goneSince,
    nowMs: o.nowMs,
    graceMs: o.graceMs,
    viewComplete: o.viewComplete,
  });
  const removedBecause = new Map(wanted.removedBecause);
  const { byNamespace, overCap } = capPerNamespace(wanted.subjects, new Set(current.map(subjectKey)), o.maxPerNamespace, removedBecause);

  const target = rbac ? [...byNamespace].map(([namespace, subjects]) => bindingIn(o.name, rbac, namespace, subjects)) : [];
  const observed = new Map(o.bindings.map((b) => [bindingId(b.kind, b.name, b.namespace), b]));
  const targetIds = new Set<string>();
  const deletes: PlanAction[] = [];
  for (const object of target) {
    const id = objectId(object);
    targetIds.add(id);
    const stored = observed.get(id);
    if (stored && stored.roleRef !== object.roleRef.name) {
      // roleRef is immutable: the old one goes, and the next reconcile creates it anew.
      deletes.push({ type: 'deleteBinding', binding: stored, why: `it refers to ClusterRole ${stored.roleRef}, not ${object.roleRef.name}` });
      continue;
    }
    if (stored && !stored.untidy && sameSubjects(stored.subjects, object.subjects)) continue;
    actions.push({ type: 'writeBinding', object, create: !stored, before: stored?.subjects ?? [] });
  }

  // Bound where they belong, as the watch shows it: what a delete may rely on.
  const boundInTarget = new Set(o.bindings.filter((b) => targetIds.has(bindingId(b.kind, b.name, b.namespace)) && b.roleRef === rbac?.clusterRole).flatMap((b) => b.subjects.map(subjectKey)));
  const stillWanted = new Set(wanted.subjects.map(subjectKey));
  for (const binding of o.bindings) {
    if (targetIds.has(bindingId(binding.kind, binding.name, binding.namespace))) continue;
    const waitingFor = binding.subjects.filter((s) => stillWanted.has(subjectKey(s)) && !boundInTarget.has(subjectKey(s)));
    if (waitingFor.length > 0) continue; // create before empty: its subjects are written elsewhere first
    deletes.push({ type: 'deleteBinding', binding, why: binding.subjects.length === 0 ? 'it is empty' : 'no subject of it is wanted here any more' });
  }
  const subjects = [...byNamespace.values()].reduce((n, list) => n + list.length, 0);
  return { actions: [...actions, ...deletes], roleState, subjects, overCap, removedBecause, goneSince: wanted.goneSince, wakeAtMs: wanted.wakeAtMs };
}

function stateOfRole(o: ObservedProfile, rbac: ProfileRbac | undefined): RoleState {
  if (!rbac) return 'none';
  if (o.role && o.role.ownedBy !== o.name) return 'foreign';
  return o.role && sameRules(o.role.rules, rbac.rules) ? 'ready' : 'repairing';
}

/** Every binding of the profile goes at once: its grant must not outlive the reason. */
function revokeAll(o: ObservedProfile, roleState: RoleState, why: string): ProfilePlan {
  const removedBecause = new Map(o.bindings.flatMap((b) => b.subjects.map((s) => [subjectKey(s), why] as const)));
  const actions = o.bindings.map((binding): PlanAction => ({ type: 'deleteBinding', binding, why }));
  return { actions, roleState, subjects: 0, overCap: new Map(), removedBecause, goneSince: new Map(), wakeAtMs: undefined };
}

/**
 * Groups subjects by namespace, at most `max` per namespace: those bound already keep their place,
 * the rest in order, so one namespace over the cap never unbinds a running agent to add another.
 */
function capPerNamespace(subjects: readonly SaSubject[], bound: ReadonlySet<string>, max: number, removedBecause: Map<string, string>) {
  const grouped = new Map<string, SaSubject[]>();
  for (const s of subjects) {
    const list = grouped.get(s.namespace);
    if (list) list.push(s);
    else grouped.set(s.namespace, [s]);
  }
  const byNamespace = new Map<string, SaSubject[]>();
  const overCap = new Map<string, number>();
  for (const [namespace, list] of grouped) {
    if (list.length <= max) {
      byNamespace.set(namespace, list);
      continue;
    }
    overCap.set(namespace, list.length);
    const kept = [...list.filter((s) => bound.has(subjectKey(s))), ...list.filter((s) => !bound.has(subjectKey(s)))].slice(0, max);
    const keep = new Set(kept.map(subjectKey));
    list.filter((s) => !keep.has(subjectKey(s))).forEach((s) => removedBecause.set(subjectKey(s), `namespace ${namespace} has ${list.length} ServiceAccounts with agents, over the cap of ${max}`));
    byNamespace.set(namespace, normalizeSubjects(kept));
  }
  return { byNamespace, overCap };
}

function countSubjects(bindings: readonly ObservedBinding[]): number {
  return new Set(bindings.flatMap((b) => b.subjects.map(subjectKey))).size;
}

/** A binding's identity: kind, name and (RoleBinding) namespace, as a tuple, never parsed back. */
function bindingId(kind: string, name: string, namespace: string | undefined): string {
  return JSON.stringify([kind, kind === 'RoleBinding' ? namespace : undefined, name]);
}

function objectId(object: BindingObject): string {
  return bindingId(object.kind, object.metadata.name, object.metadata.namespace);
}

/** Subjects a write adds and removes, for events and logs. */
export function writeDiff(action: Extract<PlanAction, { type: 'writeBinding' }>) {
  return diffSubjects(action.before, action.object.subjects);
}
