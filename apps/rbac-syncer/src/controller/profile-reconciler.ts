import type { AgentProfile } from '@outrigger/agent-profiles';
import { applyObject, deleteObject, listObjects, readObject, type EventRecorder, type KubeObject, type KubeClient } from '@outrigger/kube';
import { desiredSubjects } from '../desired/desired-subjects.js';
import {
  desiredClusterRole,
  desiredClusterRoleBinding,
  desiredRoleBindings,
  FIELD_MANAGER,
  isManaged,
  MANAGED_BY_LABEL,
  MANAGED_BY_VALUE,
  PROFILE_LABEL,
  RBAC_API_VERSION,
  sameRules,
  type BindingObject,
  type ProfileRbac,
} from '../desired/rbac-objects.js';
import { diffSubjects, normalizeSubjects, subjectKey, type SaSubject } from '../desired/subjects.js';
import type { RbacSyncerMetrics } from '../metrics/rbac-syncer.metrics.js';

export interface ClusterView {
  /** The ServiceAccounts with a live pod carrying the profile's agent (none for a retired binding). */
  liveSubjects(profile: string): Iterable<SaSubject>;
  labelledNamespaces(): ReadonlySet<string>;
  viewComplete(): boolean;
  /** Why the exec guard is not in force (see execGuardProblem), or undefined when it is. */
  execGuardProblem(): string | undefined;
  /** Our ClusterRole of that name as the watch last saw it (its profile label and rules); undefined if not ours or not seen. */
  ownClusterRole(name: string): { readonly profile: string; readonly rules: unknown } | undefined;
  /** Our ClusterRoleBinding of that name as the watch last saw it; undefined if not ours or not seen. */
  ownClusterRoleBinding(name: string): StoredBinding | undefined;
}

export interface ReconcilerDeps {
  readonly kc: KubeClient;
  readonly view: ClusterView;
  readonly protectedNamespaces: readonly string[];
  readonly graceMs: number;
  readonly events: EventRecorder;
  readonly metrics: RbacSyncerMetrics;
  readonly log: { log(m: string): void; warn(m: string): void };
  readonly now?: () => number;
}

export interface BindingResult {
  /** When to look again (a grace running out), if at all. */
  readonly requeueAfterMs?: number;
  readonly wrote: number;
  /** Subjects bound after this reconcile. */
  readonly subjects: number;
}

/** Whose pods count for a retired binding: no profile's, so it empties after the grace. */
const RETIRED_PREFIX = 'retired:';

export interface StoredBinding extends KubeObject {
  readonly subjects?: Array<{ kind?: string; name?: string; namespace?: string }>;
  readonly roleRef?: { kind?: string; name?: string };
}

/** One profile's reconcile: observe, compare, apply only what differs. */
export class ProfileReconciler {
  private readonly goneSince = new Map<string, Map<string, number>>();
  private readonly warnedUnowned = new Set<string>();
  /** The guard problem last reported per profile, so the Warning is recorded once per outage. */
  private readonly guardReported = new Map<string, string | undefined>();
  /** The resourceVersion of each ClusterRoleBinding as our last write left it. */
  private readonly written = new Map<string, string | undefined>();

  constructor(private readonly deps: ReconcilerDeps) {}

  /** Returns after how long to look again (a grace running out), if at all, and the subjects bound. */
  async reconcile(profile: AgentProfile): Promise<BindingResult> {
    const rbac = profile.rbac;
    if (!rbac) return { wrote: 0, subjects: 0 };
    const wrote = await this.ensureClusterRole(profile.name, rbac);
    const result = await this.reconcileBindings(profile.name, rbac, profile.name);
    return { ...result, wrote: result.wrote + wrote };
  }

  /**
   * A profile (or an old version's binding) that is no longer in force: no pod counts for it any
   * more, so its binding keeps its subjects through the grace period and then is empty.
   */
  async retire(profile: AgentProfile): Promise<BindingResult> {
    if (!profile.rbac) return { wrote: 0, subjects: 0 };
    return this.reconcileBindings(profile.name, profile.rbac, `${RETIRED_PREFIX}${profile.rbac.binding.kind}/${profile.rbac.binding.name}`);
  }

  /** `podsOf`: whose pods count (and whose grace memory is used); the profile name unless retiring. */
  private reconcileBindings(profile: string, rbac: ProfileRbac, podsOf: string): Promise<BindingResult> {
    return rbac.binding.kind === 'ClusterRoleBinding' ? this.reconcileClusterRoleBinding(profile, rbac, podsOf) : this.reconcileRoleBindings(profile, rbac, podsOf);
  }

  private now(): number {
    return this.deps.now?.() ?? Date.now();
  }

  private compute(podsOf: string, current: readonly SaSubject[]) {
    const profile = podsOf;
    const out = desiredSubjects({
      profile,
      live: this.deps.view.liveSubjects(profile),
      labelledNamespaces: this.deps.view.labelledNamespaces(),
      protectedNamespaces: this.deps.protectedNamespaces,
      current,
      goneSince: this.goneSince.get(profile) ?? new Map(),
      nowMs: this.now(),
      graceMs: this.deps.graceMs,
      viewComplete: this.deps.view.viewComplete(),
    });
    this.goneSince.set(profile, out.goneSince);
    return out;
  }

  private async ensureClusterRole(profile: string, rbac: ProfileRbac): Promise<number> {
    const desired = desiredClusterRole(profile, rbac);
    // Up to date as last watched: any later change to it is queued by that watch, so no read is needed.
    const watched = this.deps.view.ownClusterRole(rbac.clusterRole);
    if (watched?.profile === profile && sameRules(watched.rules, desired.rules)) return 0;
    const stored = await readObject<KubeObject & { rules?: unknown }>(this.deps.kc, { apiVersion: RBAC_API_VERSION, kind: 'ClusterRole', name: rbac.clusterRole });
    if (stored && !isManaged(stored.metadata?.labels)) {
      this.warnOnce(`ClusterRole ${rbac.clusterRole}`, `ClusterRole ${rbac.clusterRole} exists without ${MANAGED_BY_LABEL}=${MANAGED_BY_VALUE}: left alone (not ours)`);
      return 0;
    }
    if (stored && sameRules(stored.rules, desired.rules) && stored.metadata?.labels?.[PROFILE_LABEL] === profile) return 0;
    const applied = await applyObject(this.deps.kc, desired as unknown as KubeObject, { fieldManager: FIELD_MANAGER, force: true });
    this.deps.metrics.writes.inc({ kind: 'ClusterRole', verb: 'apply' });
    const why = stored ? 'rules drifted from the profile; repaired' : 'created from the profile';
    this.deps.log.log(`ClusterRole ${rbac.clusterRole}: ${why}`);
    void this.deps.events.normal({ apiVersion: RBAC_API_VERSION, kind: 'ClusterRole', name: rbac.clusterRole, uid: applied.metadata?.uid }, stored ? 'RulesRepaired' : 'Created', `ClusterRole ${why} (profile ${profile})`);
    return 1;
  }

  private async reconcileClusterRoleBinding(profile: string, rbac: ProfileRbac, podsOf: string): Promise<BindingResult> {
    const name = rbac.binding.name;
    // The watch holds it as we last wrote it: a later change would be a newer version, and queue us again.
    const watched = this.deps.view.ownClusterRoleBinding(name);
    const seenAsWritten = watched?.metadata?.resourceVersion !== undefined && watched.metadata.resourceVersion === this.written.get(name);
    const stored = seenAsWritten ? watched : await readObject<StoredBinding>(this.deps.kc, { apiVersion: RBAC_API_VERSION, kind: 'ClusterRoleBinding', name });
    if (stored && !isManaged(stored.metadata?.labels)) {
      this.warnOnce(`ClusterRoleBinding ${name}`, `ClusterRoleBinding ${name} exists without ${MANAGED_BY_LABEL}=${MANAGED_BY_VALUE}: not touched (not ours)`);
      this.deps.metrics.reconciles.inc({ profile, result: 'unowned' });
      return { wrote: 0, subjects: 0 };
    }
    if (stored && (stored.roleRef?.kind !== 'ClusterRole' || stored.roleRef?.name !== rbac.clusterRole)) {
      // roleRef is immutable: replace the binding (ours, by label).
      await deleteObject(this.deps.kc, { apiVersion: RBAC_API_VERSION, kind: 'ClusterRoleBinding', name });
      this.written.delete(name);
      this.deps.metrics.writes.inc({ kind: 'ClusterRoleBinding', verb: 'delete' });
      return this.reconcileClusterRoleBinding(profile, rbac, podsOf);
    }
    const current = storedSubjects(stored);
    // Fail closed: without the guard a cluster-wide binding reaches every namespace, so it stays empty.
    const guardProblem = this.deps.view.execGuardProblem();
    const out = guardProblem === undefined ? this.compute(podsOf, current) : { subjects: [], removedBecause: new Map(current.map((s) => [subjectKey(s), guardProblem])), wakeAtMs: undefined };
    this.deps.metrics.subjects.set({ binding: name }, out.subjects.length);
    const desired = desiredClusterRoleBinding(profile, rbac, out.subjects);
    const requeueAfterMs = out.wakeAtMs === undefined ? undefined : Math.max(0, out.wakeAtMs - this.now());
    if (stored && upToDate(stored, desired, profile)) {
      this.deps.metrics.reconciles.inc({ profile, result: 'unchanged' });
      this.reportGuard(profile, name, stored, guardProblem);
      return { requeueAfterMs, wrote: 0, subjects: out.subjects.length };
    }
    const applied = await applyObject(this.deps.kc, desired as unknown as KubeObject, { fieldManager: FIELD_MANAGER, force: true });
    this.written.set(name, applied.metadata?.resourceVersion);
    this.deps.metrics.writes.inc({ kind: 'ClusterRoleBinding', verb: 'apply' });
    this.deps.metrics.reconciles.inc({ profile, result: 'applied' });
    this.report(desired, applied, rawSubjectKeys(stored), current, out.subjects, out.removedBecause, !stored);
    this.reportGuard(profile, name, applied, guardProblem);
    return { requeueAfterMs, wrote: 1, subjects: out.subjects.length };
  }

  /** A Warning when the guard goes missing (once per outage), a Normal event when it is back. */
  private reportGuard(profile: string, name: string, binding: KubeObject, problem: string | undefined): void {
    const last = this.guardReported.get(profile);
    if (last === problem) return;
    this.guardReported.set(profile, problem);
    const object = { apiVersion: RBAC_API_VERSION, kind: 'ClusterRoleBinding', name, uid: binding.metadata?.uid };
    if (problem !== undefined) {
      this.deps.log.warn(`ClusterRoleBinding ${name} kept empty: ${problem}`);
      void this.deps.events.warning(object, 'ExecGuardMissing', `kept empty: ${problem}`);
    } else if (last !== undefined) {
      this.deps.log.log(`ClusterRoleBinding ${name}: the exec guard is in force again; subjects restored`);
      void this.deps.events.normal(object, 'ExecGuardRestored', 'the exec guard is in force again; subjects restored');
    }
  }

  private async reconcileRoleBindings(profile: string, rbac: ProfileRbac, podsOf: string): Promise<BindingResult> {
    const list = await listObjects<StoredBinding>(this.deps.kc, { apiVersion: RBAC_API_VERSION, kind: 'RoleBinding' }, { labelSelector: `${MANAGED_BY_LABEL}=${MANAGED_BY_VALUE},${PROFILE_LABEL}=${profile}` });
    const stored = new Map(list.filter((b) => b.metadata?.name === rbac.binding.name).map((b) => [b.metadata?.namespace ?? '', b]));
    const current = normalizeSubjects([...stored.values()].flatMap((b) => storedSubjects(b)));
    const out = this.compute(podsOf, current);
    this.deps.metrics.subjects.set({ binding: `${rbac.binding.name} (RoleBindings)` }, out.subjects.length);
    const requeueAfterMs = out.wakeAtMs === undefined ? undefined : Math.max(0, out.wakeAtMs - this.now());
    let wrote = 0;
    const wanted = desiredRoleBindings(profile, rbac, out.subjects);
    for (const desired of wanted) {
      const namespace = desired.metadata.namespace ?? '';
      const existing = stored.get(namespace);
      if (existing && upToDate(existing, desired, profile)) continue;
      if (!existing) {
        const other = await readObject<StoredBinding>(this.deps.kc, { apiVersion: RBAC_API_VERSION, kind: 'RoleBinding', name: rbac.binding.name, namespace });
        if (other && !isManaged(other.metadata?.labels)) {
          this.warnOnce(`RoleBinding ${namespace}/${rbac.binding.name}`, `RoleBinding ${namespace}/${rbac.binding.name} exists and is not ours: not touched`);
          continue;
        }
      }
      const applied = await applyObject(this.deps.kc, desired as unknown as KubeObject, { fieldManager: FIELD_MANAGER, force: true });
      this.deps.metrics.writes.inc({ kind: 'RoleBinding', verb: 'apply' });
      wrote++;
      this.report(desired, applied, rawSubjectKeys(existing), storedSubjects(existing), desired.subjects, out.removedBecause, !existing);
    }
    const keep = new Set(wanted.map((b) => b.metadata.namespace));
    for (const [namespace, existing] of stored) {
      if (keep.has(namespace)) continue;
      await deleteObject(this.deps.kc, { apiVersion: RBAC_API_VERSION, kind: 'RoleBinding', name: rbac.binding.name, namespace });
      this.deps.metrics.writes.inc({ kind: 'RoleBinding', verb: 'delete' });
      wrote++;
      const removed = storedSubjects(existing).map((s) => `${subjectKey(s)} (${out.removedBecause.get(subjectKey(s)) ?? 'no longer wanted'})`);
      this.deps.log.log(`RoleBinding ${namespace}/${rbac.binding.name} deleted: removed ${removed.join(', ')}`);
    }
    this.deps.metrics.reconciles.inc({ profile, result: wrote > 0 ? 'applied' : 'unchanged' });
    return { requeueAfterMs, wrote, subjects: out.subjects.length };
  }

  private report(
    desired: BindingObject,
    applied: KubeObject,
    storedKeys: string[],
    before: readonly SaSubject[],
    after: readonly SaSubject[],
    removedBecause: ReadonlyMap<string, string>,
    created: boolean,
  ): void {
    const { added, removed } = diffSubjects(before, after);
    const foreign = storedKeys.filter((k) => !k.startsWith('ServiceAccount:'));
    const parts = [
      ...(created ? ['created'] : []),
      ...(added.length ? [`added ${added.map(subjectKey).join(', ')} (opted-in pods in labelled namespaces)`] : []),
      ...(removed.length ? [`removed ${removed.map((s) => `${subjectKey(s)} (${removedBecause.get(subjectKey(s)) ?? 'not wanted'})`).join(', ')}`] : []),
      ...(foreign.length ? [`dropped subjects edited in by hand: ${foreign.join(', ')}`] : []),
    ];
    if (parts.length === 0) parts.push('repaired drift (labels, order or duplicate subjects)');
    const where = desired.metadata.namespace ? `${desired.metadata.namespace}/` : '';
    const message = `${desired.kind} ${where}${desired.metadata.name}: ${parts.join('; ')}; now ${after.length} subject(s)`;
    this.deps.log.log(message);
    void this.deps.events.normal(
      { apiVersion: RBAC_API_VERSION, kind: desired.kind, name: desired.metadata.name, namespace: desired.metadata.namespace, uid: applied.metadata?.uid },
      'SubjectsChanged',
      message,
    );
  }

  private warnOnce(key: string, message: string): void {
    if (this.warnedUnowned.has(key)) return;
    this.warnedUnowned.add(key);
    this.deps.log.warn(message);
  }
}

function storedSubjects(stored: StoredBinding | undefined): SaSubject[] {
  return normalizeSubjects(
    (stored?.subjects ?? [])
      .filter((s) => s.kind === 'ServiceAccount' && s.name && s.namespace)
      .map((s) => ({ kind: 'ServiceAccount' as const, name: s.name as string, namespace: s.namespace as string })),
  );
}

function rawSubjectKeys(stored: StoredBinding | undefined): string[] {
  return (stored?.subjects ?? []).map((s) => `${s.kind}:${s.namespace ?? ''}/${s.name ?? ''}`);
}

/** Stored exactly as desired: same subjects in the same order, nothing else, and our labels. */
function upToDate(stored: StoredBinding, desired: BindingObject, profile: string): boolean {
  const labels = stored.metadata?.labels;
  if (!isManaged(labels) || labels?.[PROFILE_LABEL] !== profile) return false;
  const want = desired.subjects.map((s) => `ServiceAccount:${s.namespace}/${s.name}`);
  const have = rawSubjectKeys(stored);
  return want.length === have.length && want.every((k, i) => k === have[i]);
}
