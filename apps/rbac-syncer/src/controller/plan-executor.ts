import { type AgentProfile, agentVariants, profileHash } from '@outrigger/agent-profiles';
import { applyObject, createObject, deleteObject, type EventRecorder, inParallel, isConflict, type KubeClient, type KubeObject, mergePatchObject } from '@outrigger/kube';
import { type AgentRevision, REPLACED_AT_ANNOTATION, revisionObject } from '@outrigger/sidecar';
import { revisionsToPrune } from '../desired/agent-revisions.js';
import { FIELD_MANAGER, RBAC_API_VERSION } from '../desired/rbac-objects.js';
import { subjectKey } from '../desired/subjects.js';
import type { RbacSyncerMetrics } from '../metrics/rbac-syncer.metrics.js';
import type { ObservedBinding } from '../plan/observed-profile.js';
import { type Actions, type PlanAction, writeDiff } from '../plan/plan-profile.js';
import type { BindingWrite } from './unseen-writes.js';

export interface ExecutorDeps {
  readonly kc: KubeClient;
  readonly events: EventRecorder;
  readonly metrics: RbacSyncerMetrics;
  readonly log: { log(m: string): void; warn(m: string): void };
}

export interface Execution {
  /** The creates of objects that exist and are not ours: left alone, reported on the status. */
  readonly notOurs: readonly PlanAction[];
  /** The bindings written or deleted that changed, with the version each was planned from. */
  readonly bindings: readonly BindingWrite[];
}

/** Performs a plan (a profile's or one namespace's) in its order, stopping at the first failure (the error policy retries), and records agent revisions. */
export class PlanExecutor {
  /** Objects this executor created, so a create that its watch has not shown yet is not taken for someone else's. */
  private readonly created = new Set<string>();
  /** The guard problem last reported per profile, so the Warning is recorded once per outage. */
  private readonly guardReported = new Map<string, string | undefined>();

  constructor(private readonly deps: ExecutorDeps) {}

  /** A Warning on the profile's ClusterRole when the guard goes missing (once per outage), a Normal event when it is back. */
  reportGuard(profile: string, clusterRole: string, problem: string | undefined): void {
    const last = this.guardReported.get(profile);
    if (last === problem) return;
    this.guardReported.set(profile, problem);
    const object = { apiVersion: RBAC_API_VERSION, kind: 'ClusterRole', name: clusterRole };
    if (problem !== undefined) {
      this.deps.log.warn(`profile ${profile}: its bindings are emptied: ${problem}`);
      void this.deps.events.warning(object, 'ExecGuardMissing', `bindings emptied: ${problem}`);
    } else if (last !== undefined) {
      this.deps.log.log(`profile ${profile}: the exec guard is in force again; bindings restored`);
      void this.deps.events.normal(object, 'ExecGuardRestored', 'the exec guard is in force again; bindings restored');
    }
  }

  /**
   * Stores the agents a profile injects now (its own, and its staged change's while it has one) as
   * agent revisions, numbered from `generation`: pods injected from them are verified against them
   * after the next edit. Marks when each other one was replaced (unmarks one in force again: a
   * rollback), so pods created later with its agent are not taken for injected ones. Prunes the
   * oldest beyond those kept.
   */
  async recordRevisions(profile: AgentProfile, generation: number, stored: readonly AgentRevision[], namespace: string, now = new Date()): Promise<void> {
    const { kc, metrics } = this.deps;
    const { stable, canary } = agentVariants(profile);
    const agents = canary ? [stable, canary.profile] : [stable];
    const inForce = new Set(agents.map(profileHash));
    let next = Math.max(generation, ...stored.map((r) => r.revision + 1));
    for (const agent of agents) {
      if (stored.some((r) => r.hash === profileHash(agent))) continue;
      await createObject(kc, revisionObject(agent, next++, namespace), { fieldManager: FIELD_MANAGER }).catch((error: unknown) => {
        if (!isConflict(error)) throw error;
      });
      metrics.writes.inc({ kind: 'ControllerRevision', verb: 'create' });
    }
    const pruned = revisionsToPrune(stored, inForce);
    for (const revision of stored) {
      const replaced = !inForce.has(revision.hash);
      const markedReplaced = revision.replacedAt !== undefined;
      if (pruned.includes(revision) || replaced === markedReplaced) continue;
      // A rollback brings a replaced spec back into force: its mark goes.
      const patch = { metadata: { annotations: { [REPLACED_AT_ANNOTATION]: replaced ? now.toISOString() : null } } };
      await mergePatchObject(kc, { apiVersion: 'apps/v1', kind: 'ControllerRevision', name: revision.name, namespace }, patch, { fieldManager: FIELD_MANAGER });
      metrics.writes.inc({ kind: 'ControllerRevision', verb: 'patch' });
    }
    for (const old of pruned) {
      await deleteObject(kc, { apiVersion: 'apps/v1', kind: 'ControllerRevision', name: old.name, namespace });
      metrics.writes.inc({ kind: 'ControllerRevision', verb: 'delete' });
    }
  }

  /**
   * The plan's steps in their order (the ClusterRole, then every write, then every delete: what a
   * delete relies on is written first); within a step the objects are independent, so up to
   * WRITES_IN_FLIGHT go at once. A failure ends the plan after the step's requests in flight.
   */
  async execute(profile: string, plan: Actions): Promise<Execution> {
    const notOurs: PlanAction[] = [];
    const bindings: BindingWrite[] = [];
    const steps = [['createClusterRole', 'applyClusterRole'], ['writeBinding'], ['deleteBinding', 'shrinkBinding']];
    for (const types of steps) {
      const actions = plan.actions.filter((a) => types.includes(a.type));
      await inParallel(actions, WRITES_IN_FLIGHT, async (action) => {
        const done = await this.perform(profile, action, plan, bindings);
        if (done === 'notOurs') notOurs.push(action);
      });
    }
    return { notOurs, bindings };
  }

  /** 'stale': the object changed since the watch showed it; the watch shows the change and queues it again, so it is planned anew, not written over. */
  private async perform(profile: string, action: PlanAction, plan: Actions, bindings: BindingWrite[]): Promise<'done' | 'notOurs' | 'stale'> {
    const { kc, metrics, log } = this.deps;
    switch (action.type) {
      case 'createClusterRole':
      case 'applyClusterRole': {
        const object = action.object as unknown as KubeObject;
        const create = action.type === 'createClusterRole';
        // Server-side apply even to create: the API server checks `escalate` against the name in the URL, which a POST has not.
        const stored = await this.write(object, create ? 'claim' : 'apply');
        if (stored === 'stale') return 'stale';
        if (!stored) return 'notOurs';
        metrics.writes.inc({ kind: 'ClusterRole', verb: create ? 'create' : 'apply' });
        const why = create ? 'created from the profile' : 'rules drifted from the profile; repaired';
        log.log(`ClusterRole ${action.object.metadata.name}: ${why}`);
        void this.deps.events.normal({ apiVersion: RBAC_API_VERSION, kind: 'ClusterRole', name: action.object.metadata.name, uid: stored.metadata?.uid }, create ? 'Created' : 'RulesRepaired', `ClusterRole ${why} (profile ${profile})`);
        return 'done';
      }
      case 'writeBinding': {
        const object = action.object as unknown as KubeObject;
        const create = action.binding === undefined;
        const stored = create ? await this.write(object, 'create') : await this.applyOver(object, action.binding.resourceVersion);
        if (stored === 'stale') return 'stale';
        if (!stored) return 'notOurs';
        metrics.writes.inc({ kind: action.object.kind, verb: create ? 'create' : 'apply' });
        if (stored.metadata?.resourceVersion !== action.binding?.resourceVersion) bindings.push(bindingWrite(action.object.kind, action.object.metadata, action.binding?.resourceVersion));
        const { added, removed } = writeDiff(action);
        const parts = [
          ...(create ? ['created'] : []),
          ...(added.length ? [`added ${added.map(subjectKey).join(', ')} (agents injected in a labelled namespace)`] : []),
          ...(removed.length ? [`removed ${removed.map((s) => `${subjectKey(s)} (${plan.removedBecause.get(subjectKey(s)) ?? 'not wanted'})`).join(', ')}`] : []),
        ];
        if (action.listRanOut) {
          log.log(`${describeAction(action)}: the ServiceAccounts it listed as revoked are past REVOKED_KEEP; the exec guard judges them no more`);
          return 'done';
        }
        if (parts.length === 0) parts.push('repaired drift (subjects edited by hand, order or duplicates)');
        const message = `${describeAction(action)}: ${parts.join('; ')}; now ${action.object.subjects.length} subject(s)`;
        log.log(message);
        // A new binding is its own record; an Event for each would double a cold start's writes (one binding per namespace).
        const { name, namespace } = action.object.metadata;
        if (!create) void this.deps.events.normal({ apiVersion: RBAC_API_VERSION, kind: action.object.kind, name, namespace, uid: stored.metadata?.uid }, 'SubjectsChanged', message);
        return 'done';
      }
      case 'shrinkBinding': {
        const stored = await this.applyOver(action.object as unknown as KubeObject, action.binding.resourceVersion);
        if (stored === 'stale') return 'stale';
        metrics.writes.inc({ kind: action.object.kind, verb: 'apply' });
        if (stored.metadata?.resourceVersion !== action.binding.resourceVersion) bindings.push(bindingWrite(action.object.kind, action.object.metadata, action.binding.resourceVersion));
        const kept = new Set(action.object.subjects.map(subjectKey));
        const gone = action.binding.subjects.filter((s) => !kept.has(subjectKey(s))).map((s) => `${subjectKey(s)} (${plan.removedBecause.get(subjectKey(s)) ?? 'bound in the binding of its namespace'})`);
        const held = action.object.subjects.length;
        const listed = action.object.metadata.annotations === undefined ? '' : '; those not bound elsewhere stay listed for the exec guard for REVOKED_KEEP';
        const message = `${describeAction(action)} (of an earlier version): removed ${gone.join(', ') || (action.binding.untidy ? 'what was edited in by hand' : 'no one (those it listed as revoked past REVOKED_KEEP are dropped from the list)')}${listed}; ${held > 0 ? `keeps ${held} subject(s) until their namespaces' own bindings hold them` : 'holds no one'}`;
        log.log(message);
        void this.deps.events.normal({ apiVersion: RBAC_API_VERSION, kind: action.object.kind, name: action.object.metadata.name, uid: stored.metadata?.uid }, 'SubjectsChanged', message);
        return 'done';
      }
      case 'deleteBinding': {
        const { kind, name, namespace, resourceVersion } = action.binding;
        const deleted = await this.unlessStale(deleteObject(kc, { apiVersion: RBAC_API_VERSION, kind, name, namespace }, { resourceVersion }), kind);
        if (deleted === 'stale') return 'stale';
        metrics.writes.inc({ kind, verb: 'delete' });
        bindings.push(bindingWrite(kind, { name, namespace }, resourceVersion));
        const subjects = action.binding.subjects.map((s) => `${subjectKey(s)} (${plan.removedBecause.get(subjectKey(s)) ?? 'bound elsewhere'})`);
        log.log(`${describeAction(action)} deleted because ${action.why}${subjects.length ? `: ${subjects.join(', ')}` : ''}`);
        return 'done';
      }
    }
  }

  /** `apply` over the version of the object the watch showed (taking back fields edited by hand); 'stale' if it has changed since. */
  private async applyOver(object: KubeObject, resourceVersion: string): Promise<KubeObject | 'stale'> {
    const over = { ...object, metadata: { ...object.metadata, resourceVersion } };
    // Forced, so a 409 is the version's precondition, never a conflict of field managers.
    return this.unlessStale(applyObject(this.deps.kc, over, { fieldManager: FIELD_MANAGER, force: true }), object.kind ?? '');
  }

  /** A request that carries a resourceVersion precondition: its 409 means the object changed since the watch showed it. */
  private unlessStale<T>(request: Promise<T>, kind: string): Promise<T | 'stale'> {
    return request.catch((error: unknown) => {
      if (!isConflict(error)) throw error;
      return this.stale(kind);
    });
  }

  private stale(kind: string): 'stale' {
    this.deps.metrics.staleWrites.inc({ kind });
    return 'stale';
  }

  /**
   * `apply` an object the watch shows as ours (taking back fields edited by hand); `create` (POST)
   * or `claim` (apply without force) a new one, which fail with 409 rather than take over an object
   * of that name that is not ours: undefined then, 'stale' when it is the one we created a moment ago.
   */
  private async write(object: KubeObject, mode: 'create' | 'claim' | 'apply'): Promise<KubeObject | undefined | 'stale'> {
    if (mode === 'apply') return applyObject(this.deps.kc, object, { fieldManager: FIELD_MANAGER, force: true });
    const id = `${object.kind}/${object.metadata?.namespace ?? ''}/${object.metadata?.name ?? ''}`;
    try {
      const stored = mode === 'create' ? await createObject(this.deps.kc, object, { fieldManager: FIELD_MANAGER }) : await applyObject(this.deps.kc, object, { fieldManager: FIELD_MANAGER });
      if (this.created.size >= MAX_REMEMBERED) this.created.clear();
      this.created.add(id);
      return stored;
    } catch (error) {
      if (!isConflict(error)) throw error;
      // Ours, written a moment ago: the watch will show it and queue the profile again.
      if (this.created.has(id)) return this.stale(object.kind ?? '');
      const where = object.metadata?.namespace ? `${object.metadata.namespace}/` : '';
      this.deps.log.warn(`${object.kind} ${where}${object.metadata?.name} exists and is not Outrigger's: left alone`);
      return undefined;
    }
  }
}

function bindingWrite(kind: ObservedBinding['kind'], metadata: { readonly name: string; readonly namespace?: string }, from: string | undefined): BindingWrite {
  return { kind, name: metadata.name, namespace: metadata.namespace, from };
}

/** Requests in flight per step: a cold start writes one binding per namespace, thousands of them. */
const WRITES_IN_FLIGHT = 16;

/** Enough to bridge the watch's lag after a burst of creates; forgetting only costs a NameTaken until the watch catches up. */
const MAX_REMEMBERED = 100_000;

/** The object an action is about, as logs and the status name it. */
export function describeAction(action: PlanAction): string {
  switch (action.type) {
    case 'createClusterRole':
    case 'applyClusterRole':
      return `ClusterRole ${action.object.metadata.name}`;
    case 'writeBinding':
      return `${action.object.kind} ${action.object.metadata.namespace ? `${action.object.metadata.namespace}/` : ''}${action.object.metadata.name}`;
    case 'deleteBinding':
      return `${action.binding.kind} ${action.binding.kind === 'RoleBinding' ? `${action.binding.namespace}/` : ''}${action.binding.name}`;
    case 'shrinkBinding':
      return `${action.object.kind} ${action.object.metadata.name}`;
  }
}
