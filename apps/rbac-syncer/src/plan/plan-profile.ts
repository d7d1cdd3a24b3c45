import { desiredSubjects } from '../desired/desired-subjects.js';
import { bindingIn, type BindingObject, type ClusterRoleObject, desiredClusterRole, observedBindingWith, type ProfileRbac, sameRules } from '../desired/rbac-objects.js';
import { diffSubjects, normalizeRevoked, normalizeSubjects, type RevokedSubject, type RevokedSubjects, type SaSubject, sameSubjects, subjectKey } from '../desired/subjects.js';
import { bindingId, type ObservedBinding, type ObservedProfile } from './observed-profile.js';

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
  /** `binding`: as the watch shows it, written over only if still so; undefined: created (POST, so an object of that name that is not ours is never taken over). */
  | {
      readonly type: 'writeBinding';
      readonly namespace: string;
      readonly object: BindingObject;
      readonly binding: ObservedBinding | undefined;
      /** Only the revoked list changes: it ran out (written without it, or with those still in force). */
      readonly listRanOut?: true;
    }
  | { readonly type: 'deleteBinding'; readonly binding: ObservedBinding; readonly why: string }
  /** A binding of an earlier version keeps only the subjects some namespace still binds, listing those it loses (`object`: it, so written). */
  | { readonly type: 'shrinkBinding'; readonly binding: ObservedBinding; readonly object: BindingObject };

/** What the executor performs, and why subjects go (for events and logs), by subjectKey. */
export interface Actions {
  /** In order: the role, then binding writes (creates before the deletes they make safe), then deletes. */
  readonly actions: readonly PlanAction[];
  readonly removedBecause: ReadonlyMap<string, string>;
}

/** One namespace's bindings of a profile: planned alone on its own changes, or as part of the profile. */
export interface NamespacePlan extends Actions {
  readonly namespace: string;
  /** ServiceAccounts bound in the namespace once the plan is done. */
  readonly subjects: number;
  /** How many ServiceAccounts with agents the namespace has, when over the cap. */
  readonly overCap: number | undefined;
  /** The planner's memory for the namespace: since when each bound subject has had no live pod. */
  readonly goneSince: ReadonlyMap<string, number>;
  /** When to look at the namespace again (a grace running out), epoch ms. */
  readonly wakeAtMs: number | undefined;
}

export interface ProfilePlan extends Actions {
  readonly roleState: RoleState;
  /** The plan of every namespace the profile has bindings, live agents or memory in. */
  readonly namespaces: ReadonlyMap<string, NamespacePlan>;
  /** ServiceAccounts bound once the plan is done. */
  readonly subjects: number;
  /** Namespaces with more ServiceAccounts than the cap, and how many they have. */
  readonly overCap: ReadonlyMap<string, number>;
  /** The planner's memory per namespace. */
  readonly goneSince: ReadonlyMap<string, ReadonlyMap<string, number>>;
  /** When the profile step must look again (a list it wrote on a binding running out), epoch ms. */
  readonly wakeAtMs: number | undefined;
}

/**
 * One profile's plan: pure, from what the stores show to the writes that make it right. The
 * profile-level step (the ClusterRole, revoking everything, the bindings of earlier versions
 * that hold several namespaces) and then every namespace's plan (planNamespace).
 * Invariants (property-tested in plan-profile.property.spec.ts):
 * - a binding is written only to the ClusterRole Outrigger owns for this profile, holding exactly its rules;
 * - a subject is added only for a live pod that carries the agent as injected;
 * - each binding holds one namespace's ServiceAccounts, at most the cap of them;
 * - a binding is deleted only when the subjects it holds that are still wanted are bound elsewhere (create before empty);
 *   when its grant must stop (a foreign role, no exec guard) it is emptied at once;
 * - a binding of an earlier version only loses subjects, and keeps none that no namespace binds any more;
 * - planning a namespace alone gives what planning the whole profile gives for it;
 * - whoever a binding holds or lists in force stays held or listed by one of the profile's
 *   bindings, at every step of the plan: a ServiceAccount removed from a binding, by any path, is
 *   listed on it as revoked for `revokedKeepMs` (unless the watch shows it bound elsewhere), and a
 *   binding is deleted only once it holds and lists no one else (the exec guard judges requests
 *   the API server authorized before the removal). Only when the grant must stop at once and one
 *   binding's list would outgrow REVOKED_LIST_MAX_CHARS does the rest go unlisted.
 */
export function planProfile(o: ObservedProfile): ProfilePlan {
  const rbac = o.profile?.rbac;
  const roleState = stateOfRole(o, rbac);
  const actions: PlanAction[] = [];
  if (rbac && roleState === 'repairing') {
    const object = desiredClusterRole(o.name, rbac);
    actions.push(o.role ? { type: 'applyClusterRole', object } : { type: 'createClusterRole', object });
  }
  const why = revokeWhy(o, roleState);
  if (why !== undefined) return revokeAll(o, roleState, why);
  // While the role is being repaired nothing is bound to it: the next reconcile follows the watch.
  if (roleState === 'repairing') return { actions, roleState, namespaces: new Map(), subjects: countSubjects(o.bindings), overCap: new Map(), removedBecause: new Map(), goneSince: o.goneSince, wakeAtMs: undefined };

  const grouped = groupBindings(o.bindings);
  const plans = [...namespacesOf(o)].map((namespace) => planIn(o, namespace, grouped));
  // A binding of an earlier version holds several namespaces: it goes once no subject of it waits
  // to be bound in its own, and meanwhile loses every subject no namespace binds any more, so one
  // namespace that cannot move holds back no one's revocation.
  const targets = new Set(plans.flatMap((p) => (p.target ? [p.target] : [])));
  const occupied = new Set(plans.flatMap((p) => (p.occupied ? [p.occupied] : [])));
  const waiting = new Set(plans.flatMap((p) => [...p.waiting]));
  const binds = new Set(plans.flatMap((p) => [...p.binds]));
  const boundNow = new Set([...binds].filter((k) => !waiting.has(k)));
  const expiries: number[] = [];
  const legacy = o.bindings.flatMap((binding): PlanAction[] => {
    if (binding.namespace !== undefined || targets.has(bindingId(binding))) return [];
    // One that holds a namespace binding's name with another role must go first: it waits for no one.
    const occupies = occupied.has(bindingId(binding));
    const waits = !occupies && binding.subjects.some((s) => waiting.has(subjectKey(s)));
    const keep = waits ? binding.subjects.filter((s) => binds.has(subjectKey(s))) : [];
    const keepKeys = new Set(keep.map(subjectKey));
    const bound = occupies ? new Set<string>() : boundNow;
    const dropped = binding.subjects.filter((s) => !keepKeys.has(subjectKey(s)) && !bound.has(subjectKey(s)));
    const { revoked, unlisted } = listRemoved(binding, dropped, bound, o);
    const subjects = normalizeSubjects([...keep, ...unlisted]);
    if (subjects.length === 0 && !revoked) {
      return [{ type: 'deleteBinding', binding, why: binding.subjects.length === 0 ? 'it is empty' : 'its subjects are bound in the binding of their namespace' }];
    }
    if (revoked) expiries.push(runsOutAt(revoked));
    if (sameSubjects(binding.subjects, subjects) && !binding.untidy && listHolds(binding, revoked, o.nowMs)) return [];
    return [{ type: 'shrinkBinding', binding, object: observedBindingWith(o.name, binding, subjects, revoked) }];
  });
  const writes = plans.flatMap((p) => p.actions.filter((a) => a.type === 'writeBinding'));
  const deletes = plans.flatMap((p) => p.actions.filter((a) => a.type === 'deleteBinding'));
  return {
    actions: [...actions, ...writes, ...deletes, ...legacy],
    roleState,
    namespaces: new Map(plans.map((p) => [p.namespace, narrow(p)])),
    subjects: plans.reduce((n, p) => n + p.subjects, 0),
    overCap: new Map(plans.flatMap((p) => (p.overCap === undefined ? [] : [[p.namespace, p.overCap] as const]))),
    removedBecause: new Map(plans.flatMap((p) => [...p.removedBecause])),
    goneSince: new Map(plans.flatMap((p) => (p.goneSince.size > 0 ? [[p.namespace, p.goneSince] as const] : []))),
    wakeAtMs: earliest(expiries),
  };
}

/**
 * One namespace's plan, from an observation of at least that namespace (see ObservedProfile);
 * undefined when the profile must be planned as a whole: its ClusterRole is being created or
 * repaired, or its grant is being revoked.
 */
export function planNamespace(o: ObservedProfile, namespace: string): NamespacePlan | undefined {
  const roleState = stateOfRole(o, o.profile?.rbac);
  if (roleState === 'repairing' || revokeWhy(o, roleState) !== undefined) return undefined;
  return narrow(planIn(o, namespace, groupBindings(o.bindings)));
}

/** The profile's bindings by the namespace they hold, and those of earlier versions (several namespaces) with their subjects by namespace. */
interface GroupedBindings {
  readonly byNamespace: ReadonlyMap<string, readonly ObservedBinding[]>;
  readonly legacy: readonly ObservedBinding[];
  readonly legacySubjects: ReadonlyMap<string, readonly SaSubject[]>;
}

/** Grouped once per plan, so planning every namespace stays linear in the bindings and subjects. */
function groupBindings(bindings: readonly ObservedBinding[]): GroupedBindings {
  const byNamespace = new Map<string, ObservedBinding[]>();
  const legacySubjects = new Map<string, SaSubject[]>();
  const legacy: ObservedBinding[] = [];
  const add = <V>(map: Map<string, V[]>, key: string, value: V) => {
    const list = map.get(key);
    if (list) list.push(value);
    else map.set(key, [value]);
  };
  for (const b of bindings) {
    if (b.namespace !== undefined) add(byNamespace, b.namespace, b);
    else {
      legacy.push(b);
      b.subjects.forEach((s) => add(legacySubjects, s.namespace, s));
    }
  }
  return { byNamespace, legacy, legacySubjects };
}

/** A namespace's plan with what only the profile step needs. */
interface NamespaceWork extends NamespacePlan {
  /** The binding this namespace's subjects belong in, once it holds any. */
  readonly target: string | undefined;
  /** Subjects wanted here that the watch does not show in the target yet: a binding holding them may not go. */
  readonly waiting: ReadonlySet<string>;
  /** Every subject this namespace's plan binds (within the cap). */
  readonly binds: ReadonlySet<string>;
  /** The binding that holds the target's name with another role, which empties and goes before the target can be written. */
  readonly occupied: string | undefined;
}

function planIn(o: ObservedProfile, namespace: string, { byNamespace, legacy, legacySubjects }: GroupedBindings): NamespaceWork {
  const rbac = o.profile?.rbac;
  const here = byNamespace.get(namespace) ?? [];
  const current = normalizeSubjects([...here.flatMap((b) => b.subjects.filter((s) => s.namespace === namespace)), ...(legacySubjects.get(namespace) ?? [])]);
  const live: SaSubject[] = rbac ? (o.live.get(namespace) ?? []).map((name) => ({ kind: 'ServiceAccount' as const, namespace, name })) : [];
  const wanted = desiredSubjects({
    profile: o.name,
    live,
    sharing: new Set((o.sharing.get(namespace) ?? []).map((name) => subjectKey({ namespace, name }))),
    labelledNamespaces: o.labelledNamespaces,
    protectedNamespaces: o.protectedNamespaces,
    current,
    goneSince: o.goneSince.get(namespace) ?? new Map(),
    nowMs: o.nowMs,
    graceMs: o.graceMs,
    viewComplete: o.viewComplete,
  });
  const removedBecause = new Map(wanted.removedBecause);
  const planned = capNamespace(namespace, wanted.subjects, new Set(current.map(subjectKey)), o.maxPerNamespace, removedBecause);
  const overCap = planned.length < wanted.subjects.length ? wanted.subjects.length : undefined;

  const shape = rbac ? bindingIn(o.name, rbac, namespace, []) : undefined;
  const targetId = shape ? bindingId({ kind: shape.kind, name: shape.metadata.name, namespace: shape.metadata.namespace }) : undefined;
  const stored = targetId === undefined ? undefined : [...here, ...legacy].find((b) => bindingId(b) === targetId);
  const ownRole = stored !== undefined && stored.roleRef === rbac?.clusterRole;
  // roleRef cannot change: a binding of the target's name with another role empties and goes first.
  const occupied = stored !== undefined && !ownRole ? targetId : undefined;
  // Those it loses stay listed for the exec guard; while any are, the binding stays, holding no one else.
  const { subjects: final, revoked, deferred } = ownRole ? revokeWithin(stored, planned, o) : { subjects: planned, revoked: undefined, deferred: [] };
  deferred.forEach((s) => removedBecause.delete(subjectKey(s)));
  const kept = final;
  const keptKeys = new Set(kept.map(subjectKey));
  const object = rbac && !occupied && (kept.length > 0 || revoked) ? bindingIn(o.name, rbac, namespace, kept, revoked) : undefined;
  const target = object ? targetId : undefined;
  const writes: PlanAction[] = [];
  const deletes: PlanAction[] = [];
  if (object && !(stored && !stored.untidy && sameSubjects(stored.subjects, object.subjects) && listHolds(stored, revoked, o.nowMs))) {
    const listRanOut = stored !== undefined && !stored.untidy && sameSubjects(stored.subjects, object.subjects);
    writes.push({ type: 'writeBinding', namespace, object, binding: stored, ...(listRanOut ? { listRanOut } : {}) });
  }
  if (occupied && stored) {
    const why = `its binding refers to ClusterRole ${stored.roleRef}, not ${rbac?.clusterRole} (a roleRef cannot change): bound again once REVOKED_KEEP has passed and the binding is written anew`;
    stored.subjects.forEach((s) => removedBecause.set(subjectKey(s), why));
  }

  // Bound where they belong, as the watch shows it: what a delete may rely on. Subjects over the
  // cap are never bound here, so they wait for nothing.
  const boundInTarget = new Set(ownRole ? stored.subjects.map(subjectKey) : []);
  const binds = keptKeys;
  const waiting = new Set([...binds].filter((k) => !boundInTarget.has(k)));
  const boundNow = new Set([...binds].filter((k) => boundInTarget.has(k)));
  const expiries = revoked ? [runsOutAt(revoked)] : [];
  for (const binding of here) {
    const id = bindingId(binding);
    if (id === target) continue;
    const occupies = id === occupied;
    if (!occupies && binding.subjects.some((s) => waiting.has(subjectKey(s)))) continue; // create before empty: its subjects are written elsewhere first
    const bound = occupies ? new Set<string>() : boundNow;
    const { revoked: left, unlisted } = listRemoved(binding, binding.subjects.filter((s) => !bound.has(subjectKey(s))), bound, o);
    if (!left && unlisted.length === 0) {
      const why = occupies ? `it refers to ClusterRole ${binding.roleRef}, not ${rbac?.clusterRole}` : binding.subjects.length === 0 ? 'it is empty' : 'no subject of it is wanted here any more';
      deletes.push({ type: 'deleteBinding', binding, why });
      continue;
    }
    if (left) expiries.push(runsOutAt(left));
    if (!sameSubjects(binding.subjects, unlisted) || binding.untidy || !listHolds(binding, left, o.nowMs)) {
      writes.push({ type: 'writeBinding', namespace, object: observedBindingWith(o.name, binding, unlisted, left), binding });
    }
  }
  const wakeAtMs = earliest([wanted.wakeAtMs, ...expiries]);
  return { namespace, actions: [...writes, ...deletes], removedBecause, subjects: occupied ? 0 : kept.length, overCap, goneSince: wanted.goneSince, wakeAtMs, target, waiting, binds, occupied };
}

/** How long a binding's revoked list may grow, in characters: well within the API server's 256 KiB of annotations per object. */
export const REVOKED_LIST_MAX_CHARS = 128 * 1024;

/**
 * The target binding's subjects and revoked list once `kept` are its subjects: those it loses are
 * listed, as many as fit REVOKED_LIST_MAX_CHARS; the rest (`deferred`) stay bound until the list
 * has room, and new subjects give way to them so the namespace stays within the cap.
 */
function revokeWithin(stored: ObservedBinding, kept: readonly SaSubject[], o: ObservedProfile): { subjects: SaSubject[]; revoked: RevokedSubjects | undefined; deferred: SaSubject[] } {
  const keptKeys = new Set(kept.map(subjectKey));
  const { revoked, unlisted: deferred } = listRemoved(stored, stored.subjects.filter((s) => !keptKeys.has(subjectKey(s))), keptKeys, o);
  if (deferred.length === 0) return { subjects: [...kept], revoked, deferred };
  const wasBound = new Set(stored.subjects.map(subjectKey));
  const bound = kept.filter((s) => wasBound.has(subjectKey(s)));
  const added = kept.filter((s) => !wasBound.has(subjectKey(s)));
  const space = Math.max(0, o.maxPerNamespace - bound.length - deferred.length);
  return { subjects: normalizeSubjects([...bound, ...deferred, ...added.slice(0, space)]), revoked, deferred };
}

/**
 * What `binding` lists once `removed` leave it: those it lists still in force, less any `bound`
 * (where the guard judges them anyway), and as many of `removed` as fit REVOKED_LIST_MAX_CHARS,
 * each until `revokedKeepMs` from now; `unlisted`, those that did not fit, which only a grant that
 * must stop at once drops.
 */
function listRemoved(binding: ObservedBinding, removed: readonly SaSubject[], bound: ReadonlySet<string>, { nowMs, revokedKeepMs }: ObservedProfile): { revoked: RevokedSubjects | undefined; unlisted: SaSubject[] } {
  const earlier = listedStill(binding, nowMs).filter((e) => !bound.has(subjectKey(e)));
  let room = REVOKED_LIST_MAX_CHARS - earlier.reduce((n, e) => n + listedChars(e), 0);
  const listed: RevokedSubject[] = [];
  const unlisted: SaSubject[] = [];
  for (const s of removed) {
    const entry = { ...s, untilMs: nowMs + revokedKeepMs };
    const chars = listedChars(entry);
    if (chars <= room) {
      listed.push(entry);
      room -= chars;
    } else unlisted.push(s);
  }
  const revoked = normalizeRevoked([...earlier, ...listed]);
  return { revoked: revoked.length > 0 ? revoked : undefined, unlisted };
}

/** What an entry takes of the annotations: its name and its date, each with a separator. */
export function listedChars(entry: RevokedSubject): number {
  return subjectKey(entry).length + String(entry.untilMs).length + 2;
}

/** The entries of a binding's revoked list still in force at `nowMs`. */
function listedStill(binding: ObservedBinding, nowMs: number): RevokedSubject[] {
  return (binding.revoked ?? []).filter((e) => e.untilMs > nowMs);
}

/**
 * Whether `stored` lists `wanted` as far as the guard needs: the same entries in force. Entries
 * past their date are dropped by the next write made for another reason, and the last by one of its own.
 */
function listHolds(stored: ObservedBinding, wanted: RevokedSubjects | undefined, nowMs: number): boolean {
  if (wanted === undefined) return stored.revoked === undefined;
  const still = listedStill(stored, nowMs);
  return still.length === wanted.length && still.every((e, i) => subjectKey(e) === subjectKey(wanted[i] as RevokedSubject) && e.untilMs === wanted[i]?.untilMs);
}

/** When a list runs out altogether: its clearing write, or its binding's delete, is due then. */
function runsOutAt(revoked: RevokedSubjects): number {
  return revoked.reduce((latest, e) => Math.max(latest, e.untilMs), -Infinity);
}

/** The plan without the profile step's working fields. */
function narrow({ target: _target, waiting: _waiting, binds: _binds, ...plan }: NamespaceWork): NamespacePlan {
  return plan;
}

/** The namespaces a whole-profile plan covers: those with bindings, bound subjects, live agents or memory. */
function namespacesOf(o: ObservedProfile): Set<string> {
  const namespaces = new Set([...o.live.keys(), ...o.goneSince.keys()]);
  for (const b of o.bindings) {
    if (b.namespace !== undefined) namespaces.add(b.namespace);
    else b.subjects.forEach((s) => namespaces.add(s.namespace));
  }
  return namespaces;
}

/** Why every binding of the profile must go at once, if it must. */
function revokeWhy(o: ObservedProfile, roleState: RoleState): string | undefined {
  const rbac = o.profile?.rbac;
  if (roleState === 'foreign') return `ClusterRole ${rbac?.clusterRole} is not Outrigger's`;
  return rbac ? o.execGuardProblem : undefined;
}

function stateOfRole(o: ObservedProfile, rbac: ProfileRbac | undefined): RoleState {
  if (!rbac) return 'none';
  if (o.role && o.role.ownedBy !== o.name) return 'foreign';
  return o.role && sameRules(o.role.rules, rbac.rules) ? 'ready' : 'repairing';
}

/**
 * Every binding of the profile is emptied at once: its grant must not outlive the reason. Each
 * lists whom it held for the exec guard (as many as fit), and goes once its list runs out.
 */
function revokeAll(o: ObservedProfile, roleState: RoleState, why: string): ProfilePlan {
  const removedBecause = new Map(o.bindings.flatMap((b) => b.subjects.map((s) => [subjectKey(s), why] as const)));
  const writes: PlanAction[] = [];
  const deletes: PlanAction[] = [];
  const expiries: number[] = [];
  for (const binding of o.bindings) {
    const { revoked } = listRemoved(binding, binding.subjects, new Set(), o);
    if (!revoked) {
      deletes.push({ type: 'deleteBinding', binding, why });
      continue;
    }
    expiries.push(runsOutAt(revoked));
    if (binding.subjects.length === 0 && !binding.untidy && listHolds(binding, revoked, o.nowMs)) continue;
    const object = observedBindingWith(o.name, binding, [], revoked);
    writes.push(binding.namespace === undefined ? { type: 'shrinkBinding', binding, object } : { type: 'writeBinding', namespace: binding.namespace, object, binding });
  }
  return { actions: [...writes, ...deletes], roleState, namespaces: new Map(), subjects: 0, overCap: new Map(), removedBecause, goneSince: new Map(), wakeAtMs: earliest(expiries) };
}

/**
 * At most `max` of a namespace's subjects: those bound already keep their place, the rest in
 * order, so a namespace over the cap never unbinds a running agent to add another.
 */
function capNamespace(namespace: string, subjects: readonly SaSubject[], bound: ReadonlySet<string>, max: number, removedBecause: Map<string, string>): SaSubject[] {
  if (subjects.length <= max) return [...subjects];
  const kept = [...subjects.filter((s) => bound.has(subjectKey(s))), ...subjects.filter((s) => !bound.has(subjectKey(s)))].slice(0, max);
  const keep = new Set(kept.map(subjectKey));
  subjects.filter((s) => !keep.has(subjectKey(s))).forEach((s) => removedBecause.set(subjectKey(s), `namespace ${namespace} has ${subjects.length} ServiceAccounts with agents, over the cap of ${max}`));
  return normalizeSubjects(kept);
}

function earliest(times: readonly (number | undefined)[]): number | undefined {
  return times.reduce<number | undefined>((a, b) => (b === undefined ? a : a === undefined ? b : Math.min(a, b)), undefined);
}

function countSubjects(bindings: readonly ObservedBinding[]): number {
  return new Set(bindings.flatMap((b) => b.subjects.map(subjectKey))).size;
}

/** Subjects a write adds and removes, for events and logs. */
export function writeDiff(action: Extract<PlanAction, { type: 'writeBinding' }>) {
  return diffSubjects(action.binding?.subjects ?? [], action.object.subjects);
}
