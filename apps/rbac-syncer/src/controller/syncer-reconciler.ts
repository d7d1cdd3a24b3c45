import type { AgentProfile, ProfileInForce, ProfileVerdict } from '@outrigger/agent-profiles';
import { describeApiError } from '@outrigger/kube';
import type { RbacSyncerConfig } from '../config/rbac-syncer.config.js';
import type { AgentCounts } from '../desired/agent-counts.js';
import { profileStatus } from '../desired/profile-status.js';
import type { RbacSyncerMetrics } from '../metrics/rbac-syncer.metrics.js';
import type { ObservedProfile } from '../plan/observed-profile.js';
import { planNamespace, planProfile } from '../plan/plan-profile.js';
import type { MissingAgentEvents } from './missing-agent-events.js';
import { NamespaceStates, type ProfileTally } from './namespace-states.js';
import { describeAction, type Execution, type PlanExecutor } from './plan-executor.js';
import type { ProfilePermissions } from './profile-permissions.js';
import type { ProfileStatusWriter } from './profile-status-writer.js';
import { namespaceKey, profileKey, statusKey, type SyncKey, syncKeyId } from './sync-key.js';
import type { SyncerView } from './syncer-view.js';
import { UnseenWrites } from './unseen-writes.js';

export interface ReconcilerDeps {
  readonly config: Pick<RbacSyncerConfig, 'graceMs' | 'revokedKeepMs' | 'maxPerNamespace' | 'lease'>;
  readonly view: SyncerView;
  readonly permissions: ProfilePermissions;
  readonly executor: PlanExecutor;
  readonly statuses: ProfileStatusWriter;
  readonly missingAgents: MissingAgentEvents;
  readonly metrics: RbacSyncerMetrics;
  /** The profile of that name in force, if any. */
  readonly inForce: (name: string) => ProfileInForce | undefined;
  /** The latest verdict on AgentProfile `name` (profiles from the API only). */
  readonly verdict: (name: string) => ProfileVerdict | undefined;
  readonly queue: { enqueue(key: SyncKey): void; enqueueAfter(key: SyncKey, delayMs: number): void };
  readonly log: { warn(m: string): void };
}

type Requeue = { requeueAfterMs: number } | undefined;

/** What a reconcile concluded, for the status. */
interface Outcome {
  readonly profile: AgentProfile | undefined;
  readonly missing: readonly string[] | undefined;
  readonly tally?: ProfileTally;
  readonly foreign?: boolean;
  readonly writeFailure?: string;
  readonly agents?: AgentCounts;
}

/**
 * One SyncKey, level-based: observe the stores (SyncerView), plan (planProfile or planNamespace,
 * pure), execute (PlanExecutor), report on the AgentProfile's status. It keeps the planner's memory
 * per namespace (NamespaceStates) between plans.
 */
export class SyncerReconciler {
  private readonly states = new NamespaceStates();
  private readonly unseen = new UnseenWrites(WATCH_LAG_WAIT_MS);

  constructor(private readonly deps: ReconcilerDeps) {}

  /** A new leader plans every profile as a whole and writes every status afresh. */
  newLeader(): void {
    this.states.clear();
    this.unseen.clear();
    this.deps.statuses.clear();
  }

  async reconcile(key: SyncKey): Promise<Requeue | void> {
    const { view, permissions, metrics } = this.deps;
    const name = key.profile;
    const profile = this.deps.inForce(name)?.profile;
    // Only a profile that can bind waits for its guard; one without its permissions gets its status at once.
    const guardUnknown = profile?.rbac !== undefined && permissions.holds(profile) && !view.guardKnown(profile.rbac.binding.kind);
    if (!view.listed() || guardUnknown) {
      metrics.reconciles.inc({ profile: name, result: 'skipped' });
      return;
    }
    const end = metrics.reconcileSeconds.startTimer({ profile: name });
    try {
      switch (key.step) {
        case 'profile':
          return await this.reconcileProfile(name, profile);
        case 'namespace':
          return await this.reconcileNamespace(name, profile, key.namespace);
        case 'status':
          return await this.reconcileStatus(name, profile);
      }
    } finally {
      end();
    }
  }

  /** The whole profile: its agent revisions, its ClusterRole, the exec guard, every namespace, the status. */
  private async reconcileProfile(name: string, profile: AgentProfile | undefined): Promise<Requeue> {
    const { view, executor, metrics, queue } = this.deps;
    const missing = this.deps.permissions.missingFor(profile);
    const role = profile?.rbac ? view.role(profile.rbac.clusterRole) : undefined;
    const foreignRole = role !== undefined && role.ownedBy !== name;
    // Without its permissions a profile's RBAC is left as it is; a foreign role is revoked regardless.
    const agents = profile ? view.agentCounts(profile) : undefined;
    if (profile?.rbac && missing?.length !== 0 && !foreignRole) {
      metrics.reconciles.inc({ profile: name, result: 'skipped' });
      return wakeAt(await this.writeStatus(name, { profile, missing, tally: { subjects: 0, overCap: new Map(), notOurs: [] }, agents }));
    }
    if (profile) await executor.recordRevisions(profile, this.deps.inForce(name)?.generation ?? 0, view.revisionsOf(name), this.deps.config.lease.namespace);
    const plan = planProfile(this.observe(name, profile));
    const tally = { subjects: plan.subjects, overCap: plan.overCap, notOurs: [] as string[] };
    const foreign = plan.roleState === 'foreign';
    const { notOurs } = await this.execute(name, plan, () => ({ profile, missing, tally, foreign }));
    if (plan.roleState !== 'repairing') {
      const mine = (namespace: string) => notOurs.filter((a) => a.type === 'writeBinding' && a.namespace === namespace).map(describeAction);
      this.states.replace(name, new Map([...plan.namespaces].map(([namespace, p]) => [namespace, { goneSince: p.goneSince, subjects: p.subjects, overCap: p.overCap, notOurs: mine(namespace) }])));
      // Each namespace looks again when a grace in it runs out, alone.
      for (const [namespace, p] of plan.namespaces) if (p.wakeAtMs !== undefined) queue.enqueueAfter(namespaceKey(name, namespace), untilMs(p.wakeAtMs));
    }
    if (profile?.rbac) executor.reportGuard(name, profile.rbac.clusterRole, view.execGuardProblem(profile.rbac.binding.kind));
    metrics.reconciles.inc({ profile: name, result: plan.actions.length > 0 ? 'applied' : 'unchanged' });
    if (profile?.rbac) metrics.subjects.set({ binding: profile.rbac.binding.name }, plan.subjects);
    metrics.plannedSubjects.observe({ scope: 'profile' }, plan.subjects);
    const countsDueAt = await this.writeStatus(name, { profile, missing, tally: { ...tally, notOurs: notOurs.map(describeAction) }, foreign, agents });
    if (agents) await this.deps.missingAgents.report(name, agents.missingOwners);
    return wakeAt(countsDueAt, plan.wakeAtMs);
  }

  /**
   * One namespace of a profile, planned alone; what only the whole profile decides (a ClusterRole
   * to create or repair, everything to revoke, permissions missing, a new leader) goes to it. The
   * status follows as its own step: at once when what it sums changed, else when counts are due.
   * It is not planned while the watch has not shown its last plan's writes (UnseenWrites).
   */
  private async reconcileNamespace(name: string, profile: AgentProfile | undefined, namespace: string): Promise<Requeue> {
    const { view, metrics, queue } = this.deps;
    const missing = this.deps.permissions.missingFor(profile);
    const plannable = this.states.has(name) && !(profile?.rbac && missing?.length !== 0);
    const key = syncKeyId(namespaceKey(name, namespace));
    const waitMs = plannable ? this.unseen.waitMs(key, view.bindingsOf(name, namespace), Date.now()) : 0;
    if (waitMs > 0) {
      metrics.reconciles.inc({ profile: name, result: 'waiting' });
      return { requeueAfterMs: waitMs };
    }
    const plan = plannable ? planNamespace(this.observe(name, profile, namespace), namespace) : undefined;
    if (!plan) {
      queue.enqueue(profileKey(name));
      return;
    }
    const { notOurs, bindings } = await this.execute(name, plan, () => ({ profile, missing, tally: this.states.tally(name), foreign: false }));
    this.unseen.record(key, bindings, Date.now());
    const changed = this.states.set(name, namespace, { goneSince: plan.goneSince, subjects: plan.subjects, overCap: plan.overCap, notOurs: notOurs.map(describeAction) });
    metrics.plannedSubjects.observe({ scope: 'namespace' }, plan.subjects);
    metrics.reconciles.inc({ profile: name, result: plan.actions.length > 0 ? 'applied' : 'unchanged' });
    if (changed !== 'nothing' && profile?.rbac) metrics.subjects.set({ binding: profile.rbac.binding.name }, this.states.subjects(name));
    // A condition goes to the status at once; counts, whose agent counts walk every namespace, at most every COUNTS_LOOK_MS and when the writer takes them.
    if (changed === 'conditions') queue.enqueue(statusKey(name));
    else queue.enqueueAfter(statusKey(name), untilMs(Math.max(this.deps.statuses.countsDueAt(name), Date.now() + COUNTS_LOOK_MS)));
    // A binding of an earlier version goes once the namespaces' own show its subjects, which only a
    // plan of the whole profile sees: after a change here, not on a timer while one is stuck.
    if (view.legacyBindings(name) > 0) queue.enqueueAfter(profileKey(name), LEGACY_RECHECK_MS);
    return wakeAt(plan.wakeAtMs);
  }

  /** The profile's status and agent counts, from what its namespaces' last plans left. */
  private async reconcileStatus(name: string, profile: AgentProfile | undefined): Promise<Requeue> {
    const { view, metrics } = this.deps;
    const missing = this.deps.permissions.missingFor(profile);
    const role = profile?.rbac ? view.role(profile.rbac.clusterRole) : undefined;
    // Until the profile was planned as a whole, or while it must be, its own step writes the status.
    if (!this.states.has(name) || (profile?.rbac && missing?.length !== 0) || (role !== undefined && role.ownedBy !== name)) return;
    const tally = this.states.tally(name);
    if (profile?.rbac) metrics.subjects.set({ binding: profile.rbac.binding.name }, tally.subjects);
    const agents = profile ? view.agentCounts(profile) : undefined;
    const countsDueAt = await this.writeStatus(name, { profile, missing, tally, foreign: false, agents });
    if (agents) await this.deps.missingAgents.report(name, agents.missingOwners);
    return wakeAt(countsDueAt);
  }

  /**
   * Performs the plan; on a failure the status says why (`outcome`, computed only then), the objects
   * stay as they were, and the error policy retries with backoff.
   */
  private async execute(name: string, plan: Parameters<PlanExecutor['execute']>[1], outcome: () => Outcome): Promise<Execution> {
    try {
      return await this.deps.executor.execute(name, plan);
    } catch (error) {
      await this.writeStatus(name, { ...outcome(), writeFailure: describeApiError(error) }).catch((statusError: unknown) => {
        this.deps.log.warn(`AgentProfile ${name}: status not written: ${describeApiError(statusError)}`);
      });
      throw error;
    }
  }

  /**
   * What profile `name`'s plan depends on, from the stores at this moment: the whole profile, or
   * (given) one namespace with the bindings of earlier versions, which hold several.
   */
  private observe(name: string, profile: AgentProfile | undefined, namespace?: string): ObservedProfile {
    const { view, config } = this.deps;
    const rbac = profile?.rbac;
    const namespaces = namespace === undefined ? view.namespacesOf(profile) : new Set(view.appliesIn(profile, namespace) ? [namespace] : []);
    return {
      name,
      profile,
      role: rbac ? view.role(rbac.clusterRole) : undefined,
      bindings: view.bindingsOf(name, namespace),
      // Live only where bound: labelled, and (a scoped profile) picked by its selector.
      live: rbac ? view.live(name, namespaces) : new Map(),
      sharing: rbac ? view.live(name, namespaces, 'sharing') : new Map(),
      labelledNamespaces: namespaces,
      protectedNamespaces: view.protectedNamespaces,
      viewComplete: view.viewComplete(),
      execGuardProblem: view.execGuardProblem(rbac?.binding.kind),
      goneSince: this.states.goneSince(name, namespace),
      nowMs: Date.now(),
      graceMs: config.graceMs,
      revokedKeepMs: config.revokedKeepMs,
      maxPerNamespace: config.maxPerNamespace,
    };
  }

  /** The AgentProfile's status, when profiles come from the API; returns when to look again if only its counts wait. */
  private async writeStatus(name: string, outcome: Outcome): Promise<number | undefined> {
    const { view, statuses, config } = this.deps;
    const stored = view.storedConditions(name);
    const verdict = this.deps.verdict(name);
    if (!stored || !verdict) return undefined;
    const { profile, tally } = outcome;
    const status = profileStatus({
      verdict,
      stored,
      rbac: profile?.rbac,
      missingPermissions: outcome.missing,
      execGuardProblem: view.execGuardProblem(profile?.rbac?.binding.kind),
      writeFailure: outcome.writeFailure,
      foreignRole: outcome.foreign === true,
      notOurs: tally?.notOurs,
      overCap: tally?.overCap,
      maxPerNamespace: config.maxPerNamespace,
      subjects: tally?.subjects ?? statuses.boundSubjects(name) ?? 0,
      profile,
      agents: outcome.agents,
      namespaces: profile ? view.namespacesOf(profile).size : undefined,
      now: new Date(),
    });
    return statuses.write(name, status);
  }
}

/** The longest a namespace waits for the watch to show its last writes; then it is planned anyway (a stale write is still refused). */
const WATCH_LAG_WAIT_MS = 10_000;

/** The least time from a namespace's change of counts to the status step that counts them (the queue keeps the earliest pending, so churn gets one step per this). */
const COUNTS_LOOK_MS = 1_000;

/** How often a profile with a binding of an earlier version looks again whether it may go. */
const LEGACY_RECHECK_MS = 1_000;

/** A reconcile's requeue: at the earliest of the times given, if any. */
function wakeAt(...times: (number | undefined)[]): Requeue {
  const known = times.filter((t): t is number => t !== undefined);
  return known.length === 0 ? undefined : { requeueAfterMs: untilMs(Math.min(...known)) };
}

/** From now until just after `atMs` (epoch ms), so the time has passed when the key is looked at. */
function untilMs(atMs: number): number {
  return Math.max(0, atMs - Date.now()) + 50;
}
