import { readFile } from 'node:fs/promises';
import { Inject, Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { INJECTION_LABEL_KEY, INJECTION_LABEL_VALUE, protectedNamespacesFor } from '@outrigger/admission';
import { AGENT_PROFILE_API_VERSION, AGENT_PROFILE_PLURAL, type AgentProfile, agentProfileEntry, agentVariants, profileAppliesIn, type AgentProfileEntry, NAMESPACE_LABEL, type PolicyRule, profileHash, type ProfileInForce, ProfileSource, type RbacBindingKind } from '@outrigger/agent-profiles';
import {
  Controller,
  createObject,
  deleteObject,
  describeApiError,
  isConflict,
  describePermission,
  EventRecorder,
  missingPermissions,
  objectKey,
  resourcePath,
  type KubeClient,
  type KubeObject,
  type Reflector,
  type ReflectorStatus,
  type WatchOptions,
} from '@outrigger/kube';
import { execGuardName, rbacSyncerBasePermissions, rbacSyncerProfilePermissions } from '@outrigger/install';
import { KUBE_CLIENT } from '@outrigger/service';
import { agentRevisionName, type AgentRevision, parseAgentRevision } from '@outrigger/sidecar';
import { rbacSyncerConfig, type RbacSyncerConfig } from '../config/rbac-syncer.config.js';
import { revisionObject, revisionsToPrune } from '../desired/agent-revisions.js';
import { execGuardProblem, projectGuardBinding, projectGuardPolicy, type GuardBindingView, type GuardPolicyView } from '../desired/exec-guard.js';
import { onlyCountsDiffer, profileStatus, sameStatus, type ProfileStatus, type StoredCondition } from '../desired/profile-status.js';
import { agentCountEntries, agentCounts, type AgentCounts } from '../desired/agent-counts.js';
import { liveByNamespace, podSubjectEntries } from '../desired/live-subjects.js';
import { POD_PROTOBUF_SCHEMA, podViewKey, projectPod, samePodView, type PodView } from '../desired/pod-view.js';
import { FIELD_MANAGER, MANAGED_BY_LABEL, MANAGED_BY_VALUE, PROFILE_LABEL } from '../desired/rbac-objects.js';
import { normalizeSubjects, sameSubjects, type SaSubject } from '../desired/subjects.js';
import { RbacSyncerMetrics } from '../metrics/rbac-syncer.metrics.js';
import type { ObservedBinding, ObservedProfile, ObservedRole } from '../plan/observed-profile.js';
import { planNamespace, planProfile, type PlanAction } from '../plan/plan-profile.js';
import { MissingAgentEvents } from './missing-agent-events.js';
import { NamespaceStates, type ProfileTally } from './namespace-states.js';
import { ProfileExclusion } from './profile-exclusion.js';
import { describeAction, PlanExecutor } from './plan-executor.js';
import { writeProfileStatus } from './profile-status-writer.js';
import { describeSyncKey, namespaceKey, profileKey, statusKey, type SyncKey, syncKeyId } from './sync-key.js';

export interface SyncerStatus {
  readonly profiles: readonly string[];
  readonly synced: boolean;
  readonly viewComplete: boolean;
  /** How long the view has been incomplete (0 while complete). */
  readonly incompleteForMs: number;
  readonly leader: boolean;
  readonly watches: Record<string, ReflectorStatus>;
  /** Why an exec guard the profiles need is not in force, when one is not. */
  readonly execGuardProblem?: string;
}

/** A labelled namespace as the syncer keeps it: where a scoped profile applies depends on its labels. */
interface NamespaceView {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
}

/** An AgentProfile as the syncer keeps it: the verdict on its spec and the conditions it carries. */
interface ProfileObjectView {
  readonly entry: AgentProfileEntry;
  readonly conditions: readonly StoredCondition[];
}

/**
 * The controller, declared: reflectors on AgentProfiles, pods (projections only), labelled
 * namespaces, every ClusterRole and its own bindings feed a work queue of SyncKeys. A change of a
 * profile, its ClusterRole or the exec guard queues the profile, planned as a whole; a pod, binding
 * or namespace change queues only that namespace of the profiles concerned, planned alone. The
 * leader reconciles each key as observe → plan (planProfile or planNamespace, pure) → execute
 * (PlanExecutor), then reports on the AgentProfile's status. Keys run side by side, a whole-profile
 * step alone within its profile (ProfileExclusion). Every replica watches, so a new leader
 * starts warm. Profiles come from the API, or from PROFILES_FILE.
 */
@Injectable()
export class SyncerService implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger('RbacSyncer');
  private inForce: readonly ProfileInForce[] = [];
  private readonly source = new ProfileSource(this.logger);
  /** Per profile name and hash: the permissions the syncer lacks for it ([] when it has them all). */
  private readonly missing = new Map<string, string[]>();
  /** Per profile and namespace: the planner's memory and what the status sums. */
  private readonly states = new NamespaceStates();
  /** Per profile name ('' for any profile): the namespaces it applies in, until namespaces or profiles change. */
  private readonly applying = new Map<string, Set<string>>();
  private readonly statusWritten = new Map<string, ProfileStatus>();
  private readonly exclusion = new ProfileExclusion(RECONCILE_WORKERS);
  private readonly statusWrittenAt = new Map<string, number>();
  private missingAgents!: MissingAgentEvents;
  private controller!: Controller<SyncKey>;
  private executor!: PlanExecutor;
  private profileObjects: Reflector<ProfileObjectView> | undefined;
  /** Declared once the agent revisions are listed. */
  private pods: Reflector<PodView> | undefined;
  /** The namespaces labelled for injection, with their labels (where a scoped profile applies). */
  private namespaces!: Reflector<NamespaceView>;
  private roles!: Reflector<ObservedRole>;
  /** The agent revisions stored (ControllerRevisions), by profile and hash: the specs earlier pods were injected from. */
  private revisions!: Reflector<AgentRevision>;
  private readonly bindings: Reflector<OwnBinding>[] = [];
  /** The guard of each kind of binding, once a profile binds that way: it confines those bindings' exec. */
  private readonly guards = new Map<RbacBindingKind, { readonly name: string; readonly policy: Reflector<GuardPolicyView>; readonly binding: Reflector<GuardBindingView> }>();
  private recheckTimer: NodeJS.Timeout | undefined;
  private readonly startedAt = Date.now();
  private incompleteSince: number | undefined = Date.now();

  constructor(
    @Inject(rbacSyncerConfig.KEY) private readonly config: RbacSyncerConfig,
    private readonly metrics: RbacSyncerMetrics,
    @Inject(KUBE_CLIENT) private readonly kc: KubeClient,
  ) {}

  async onModuleInit(): Promise<void> {
    const fromApi = !this.config.profilesFile;
    const lease = this.config.lease;
    let initial: AgentProfile[] = [];
    if (this.config.profilesFile) {
      const file = this.config.profilesFile;
      const text = await readFile(file, 'utf8').catch((error: Error) => {
        throw new Error(`PROFILES_FILE ${file}: cannot be read (${error.message})`);
      });
      const loaded = this.source.fromFile(text);
      if (!loaded.ok) throw new Error(`PROFILES_FILE ${file}: ${loaded.error}`);
      initial = loaded.value.inForce.map((p) => p.profile);
    }
    // From a file, every profile's permissions are checked at startup, as a deployment error;
    // from the API, each profile's own are checked when it arrives and reported on its status.
    const required = [...rbacSyncerBasePermissions(lease, fromApi), ...initial.flatMap((p) => rbacSyncerProfilePermissions(p, this.config.execGuardName))];
    const missing = await missingPermissions(this.kc, required);
    if (missing.length > 0) {
      const lines = [...new Set(missing.map((p) => `  - ${describePermission(p)}`))].join('\n');
      throw new Error(`the rbac-syncer lacks ${missing.length} permission(s) it needs (see deploy/base/rbac-syncer/rbac.yaml):\n${lines}`);
    }

    this.controller = new Controller<SyncKey>(this.kc, {
      keys: () => this.profileKeys().map(profileKey),
      keyId: syncKeyId,
      queue: { concurrency: RECONCILE_WORKERS },
      log: this.logger,
      resyncMs: this.config.resyncMs,
      deadStreamTimeoutMs: this.config.watchDeadMs,
      leaderElection: {
        ...this.config.lease,
        onStartedLeading: () => {
          this.metrics.leader.set(1);
          this.logger.log(`became the leader (${this.controller.identity}); reconciling every profile`);
          this.statusWritten.clear();
          this.states.clear();
        },
        onStoppedLeading: () => {
          this.metrics.leader.set(0);
          this.logger.warn(`lost the lease ${lease.namespace}/${lease.name}; no longer writing`);
        },
      },
    });
    this.revisions = this.controller.watches<AgentRevision>('controllerrevisions', {
      path: resourcePath({ apiVersion: 'apps/v1', resource: 'controllerrevisions', namespace: lease.namespace }),
      labelSelector: `${MANAGED_BY_LABEL}=${MANAGED_BY_VALUE}`,
      project: parseAgentRevision,
      mapper: (revision) => [profileKey(revision.profile.name)],
      resyncOnList: false,
    });
    this.namespaces = this.controller.watches<NamespaceView>('namespaces', {
      path: resourcePath({ apiVersion: 'v1', resource: 'namespaces' }),
      labelSelector: `${INJECTION_LABEL_KEY}=${INJECTION_LABEL_VALUE}`,
      project: (namespace) => ({ name: namespace.metadata?.name ?? '', labels: namespace.metadata?.labels ?? {} }),
      onChange: () => this.applying.clear(),
      mapper: (namespace) => this.profileKeys().map((profile) => namespaceKey(profile, namespace.name)),
    });
    // Every ClusterRole, ours or not: a profile naming a role that is not Outrigger's binds nothing.
    this.roles = this.controller.watches<ObservedRole>('clusterroles', {
      path: resourcePath({ apiVersion: RBAC_API, resource: 'clusterroles' }),
      project: projectRole,
      equals: (a, b) => a.ownedBy === b.ownedBy && JSON.stringify(a.rules) === JSON.stringify(b.rules),
      mapper: (role) => this.profilesNaming(role).map(profileKey),
      resyncOnList: false,
    });
    this.bindings.push(this.controller.watches('clusterrolebindings', this.ownBindings('clusterrolebindings')));
    if (fromApi) {
      this.profileObjects = this.controller.watches<ProfileObjectView>(AGENT_PROFILE_PLURAL, {
        path: resourcePath({ apiVersion: AGENT_PROFILE_API_VERSION, resource: AGENT_PROFILE_PLURAL }),
        project: (obj) => {
          const entry = agentProfileEntry(obj);
          const conditions = (obj as { status?: { conditions?: StoredCondition[] } }).status?.conditions ?? [];
          return entry ? { entry, conditions } : undefined;
        },
        onChange: () => this.resolveFromApi(),
        // resolveFromApi queues the profiles whose verdict changed; a status update of ours changes none.
        mapper: () => [],
        resyncOnList: false,
      });
    }

    const events = new EventRecorder(this.kc, { component: 'outrigger-rbac-syncer', instance: this.controller.identity ?? 'rbac-syncer', logger: (m) => this.logger.warn(m) });
    this.executor = new PlanExecutor({ kc: this.kc, events, metrics: this.metrics, log: this.logger });
    this.missingAgents = new MissingAgentEvents(this.kc, events, this.logger);
    this.metrics.observeAgents(() => (this.pods ? this.inForce.map(({ profile }) => ({ profile: profile.name, counts: this.agentCounts(profile) })) : []));

    this.metrics.observeWatches(() => Object.entries(this.controller.status().watches).map(([resource, s]) => ({ resource, ...s })));
    this.metrics.observeExecGuard(() => (this.guardKinds().size > 0 ? this.execGuardProblems() === undefined : undefined));
    if (!fromApi) await this.useProfiles(initial.map((profile) => ({ profile, generation: 0 })));
    this.controller.run(
      (key) => this.exclusion.run(key, () => this.reconcile(key)),
      (key, error, retryIn) => {
        this.metrics.reconciles.inc({ profile: key.profile, result: 'error' });
        this.logger.warn(`reconcile ${describeSyncKey(key)} failed (retry in ${retryIn} ms): ${error instanceof Error ? error.message : String(error)}`);
      },
    );
    // Pods are judged against the stored agent revisions: list those first, so no pod is judged without them.
    void this.revisions.whenSynced().then(() => this.watchPods());
    // An admin grants a new profile's permissions after creating it: notice without a restart.
    this.recheckTimer = setInterval(() => void this.recheckDenied(), PERMISSION_RECHECK_MS);
    this.recheckTimer.unref();
  }

  private watchPods(): void {
    const namespace = this.config.lease.namespace;
    this.pods = this.controller.watches<PodView>('pods', {
      path: resourcePath({ apiVersion: 'v1', resource: 'pods' }),
      // Whole pods are parsed a page at a time and dropped for their projection: small pages, small peaks.
      pageSize: this.config.podPageSize,
      streamingList: this.config.podStreamingList,
      ...(this.config.podProtobuf ? { protobuf: POD_PROTOBUF_SCHEMA } : {}),
      project: (pod) =>
        projectPod(
          pod as never,
          this.inForce.map((p) => p.profile),
          (profile, hash) => this.revisions.get(`${namespace}/${agentRevisionName(profile, hash)}`)?.profile,
          (profile) => this.holdsPermissions(profile),
        ),
      equals: samePodView,
      // Pods of one ServiceAccount share a projection; the index says which ServiceAccounts have
      // live pods, and counts the pods of each profile by the agent they run.
      share: podViewKey,
      index: (view) => [...podSubjectEntries(view), ...agentCountEntries(view)],
      mapper: (view) => view.agents.map((agent) => namespaceKey(agent.profile, view.namespace)),
    });
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.recheckTimer);
    await this.controller?.shutdown();
  }

  status(): SyncerStatus {
    // Before onModuleInit (or if it failed): nothing watched yet.
    const { watches, synced, leader } = this.controller?.status() ?? { watches: {}, synced: false, leader: false };
    const complete = this.viewComplete();
    return {
      profiles: this.inForce.map((p) => p.profile.name),
      synced: synced && this.pods !== undefined,
      viewComplete: complete,
      incompleteForMs: complete ? 0 : Date.now() - (this.incompleteSince ?? this.startedAt),
      leader,
      watches,
      ...(this.guardKinds().size > 0 ? { execGuardProblem: this.execGuardProblems() } : {}),
    };
  }

  /** The profiles with RBAC in force whose permissions the syncer holds. */
  private profiles(): AgentProfile[] {
    return this.inForce.flatMap(({ profile }) => (this.holdsPermissions(profile) ? [profile] : []));
  }

  private holdsPermissions(profile: AgentProfile): boolean {
    return profile.rbac !== undefined && this.missing.get(permissionKey(profile))?.length === 0;
  }

  /** The namespaces a profile applies in: labelled for injection, not protected, and picked by its namespaceSelector. */
  private namespacesOf(profile: AgentProfile | undefined): Set<string> {
    const cached = this.applying.get(profile?.name ?? '');
    if (cached) return cached;
    const namespaces = new Set(this.namespaces.entries().flatMap(([, namespace]) => (this.appliesIn(profile, namespace.name) ? [namespace.name] : [])));
    this.applying.set(profile?.name ?? '', namespaces);
    return namespaces;
  }

  /** The same for one namespace. */
  private appliesIn(profile: AgentProfile | undefined, namespace: string): boolean {
    const view = this.namespaces.get(namespace);
    return view !== undefined && !protectedNamespacesFor(this.config.ownNamespace).includes(namespace) && (!profile || profileAppliesIn(profile, view.labels));
  }

  /** One profile's live opted-in pods by the agent they run, in the namespaces it applies in. */
  private agentCounts(profile: AgentProfile): AgentCounts {
    const taking = this.namespacesOf(profile);
    return agentCounts((group) => this.pods?.indexCounts(group) ?? [], profile.name, (namespace) => taking.has(namespace));
  }

  /** Every profile the syncer answers for: listed, in force, or named by a binding of ours (to empty it). */
  private profileKeys(): string[] {
    const owners = this.bindings.flatMap((store) => [...store.indexKeys(BINDING_OWNERS)]);
    return [...new Set([...this.inForce.map((p) => p.profile.name), ...this.source.names(), ...owners])];
  }

  private profilesNaming(role: ObservedRole): string[] {
    const naming = this.inForce.filter((p) => p.profile.rbac?.clusterRole === role.name).map((p) => p.profile.name);
    return role.ownedBy ? [...naming, role.ownedBy] : naming;
  }

  private resolveFromApi(): void {
    const reflector = this.profileObjects;
    if (!reflector?.status().hasSynced) return;
    const change = this.source.fromObjects(reflector.entries().map(([, view]) => view.entry));
    change.newVerdicts.forEach((verdict) => this.controller.enqueue(profileKey(verdict.name))); // its status follows
    // Most AgentProfile events are our own status writes: nothing to re-project then.
    if (change.changed) void this.useProfiles(change.inForce);
  }

  /**
   * Puts a new set of profiles in force: checks each new one's permissions, starts the watches it
   * needs, re-projects the pods (which profiles a pod belongs to depends on them), and reconciles
   * everything (bindings of profiles that left are emptied by their plans).
   */
  private async useProfiles(next: readonly ProfileInForce[]): Promise<void> {
    const before = new Map(this.inForce.map((p) => [p.profile.name, p.profile]));
    this.inForce = next;
    this.applying.clear();
    for (const { profile } of next) {
      const old = before.get(profile.name);
      if (old && profileHash(old) === profileHash(profile)) continue;
      if (profile.rbac) this.missing.delete(permissionKey(profile));
    }
    await Promise.all(next.map(({ profile }) => this.checkPermissions(profile)));
    if (next !== this.inForce) return; // a newer set arrived meanwhile
    // Watches only some profiles need, declared when the first such profile arrives.
    const withRbac = this.profiles();
    if (!this.controller.hasWatch('rolebindings') && withRbac.some((p) => p.rbac?.binding.kind === 'RoleBinding')) {
      this.bindings.push(this.controller.watches('rolebindings', this.ownBindings('rolebindings')));
    }
    for (const kind of this.guardKinds()) if (!this.guards.has(kind)) this.watchGuard(kind);
    this.pods?.relist();
    this.controller.enqueueAll();
  }

  private async checkPermissions(profile: AgentProfile): Promise<void> {
    const key = permissionKey(profile);
    if (!profile.rbac || this.missing.has(key)) return;
    try {
      const missing = await missingPermissions(this.kc, rbacSyncerProfilePermissions(profile, this.config.execGuardName));
      this.missing.set(key, [...new Set(missing.map(describePermission))]);
      if (missing.length > 0) this.logger.error(`AgentProfile ${profile.name}: not synced, the rbac-syncer lacks ${this.missing.get(key)?.join(', ')}`);
    } catch (error) {
      this.logger.warn(`AgentProfile ${profile.name}: cannot check permissions yet: ${error instanceof Error ? error.message : String(error)}`);
      setTimeout(() => void this.checkPermissions(profile).then(() => (this.pods?.relist(), this.controller.enqueueAll())), 5_000).unref();
    }
  }

  /** Asks again for the profiles the syncer lacked permissions for; those now granted take effect. */
  private async recheckDenied(): Promise<void> {
    const denied = this.inForce.filter(({ profile }) => (this.missing.get(permissionKey(profile))?.length ?? 0) > 0);
    if (denied.length === 0) return;
    denied.forEach(({ profile }) => this.missing.delete(permissionKey(profile)));
    await Promise.all(denied.map(({ profile }) => this.checkPermissions(profile)));
    if (denied.some(({ profile }) => this.missing.get(permissionKey(profile))?.length === 0)) await this.useProfiles(this.inForce);
    else denied.forEach(({ profile }) => this.controller.enqueue(profileKey(profile.name)));
  }

  /** The kinds of binding the profiles whose permissions the syncer holds bind by: the guards they need. */
  private guardKinds(): Set<RbacBindingKind> {
    return new Set(this.profiles().flatMap((p) => (p.rbac ? [p.rbac.binding.kind] : [])));
  }

  /** The exec guard of a kind of binding, its policy and binding by name: their changes concern every profile that binds so. */
  private watchGuard(kind: RbacBindingKind): void {
    const name = execGuardName(kind, this.config.execGuardName);
    const bindingSo = () => this.profiles().flatMap((p) => (p.rbac?.binding.kind === kind ? [profileKey(p.name)] : []));
    const watch = <P>(resource: string, project: (obj: KubeObject) => P) =>
      this.controller.watches<P>(guardWatch(kind, resource), {
        path: resourcePath({ apiVersion: 'admissionregistration.k8s.io/v1', resource }),
        fieldSelector: `metadata.name=${name}`,
        project,
        mapper: bindingSo,
      });
    this.guards.set(kind, { name, policy: watch(GUARD_POLICIES, projectGuardPolicy), binding: watch(GUARD_BINDINGS, projectGuardBinding) });
  }

  /** Whether the guard of a kind of binding is known: both its watches have listed. */
  private guardKnown(kind: RbacBindingKind): boolean {
    const guard = this.guards.get(kind);
    return guard !== undefined && guard.policy.status().hasSynced && guard.binding.status().hasSynced;
  }

  /** Undefined when no profile binds by `kind` or its guard is in force; unknown until both watches listed. */
  private execGuardProblem(kind: RbacBindingKind | undefined): string | undefined {
    const guard = kind && this.guards.get(kind);
    if (!kind || !guard) return undefined;
    if (!this.guardKnown(kind)) return 'exec guard not known yet (its watches have not listed)';
    return execGuardProblem(kind, guard.name, guard.policy.get(guard.name), guard.binding.get(guard.name));
  }

  /** The problems of the guards the profiles need, together; undefined when all are in force. */
  private execGuardProblems(): string | undefined {
    const problems = [...this.guardKinds()].flatMap((kind) => this.execGuardProblem(kind) ?? []);
    return problems.length > 0 ? problems.join('; ') : undefined;
  }

  private viewComplete(): boolean {
    const complete = [this.pods, this.namespaces].every((r) => r?.status().viewComplete === true);
    if (complete) this.incompleteSince = undefined;
    else this.incompleteSince ??= Date.now();
    return complete;
  }

  /** One key, level-based: observe the stores, plan (pure), execute, report. */
  private async reconcile(key: SyncKey): Promise<{ requeueAfterMs?: number } | void> {
    const name = key.profile;
    const profile = this.inForce.find((p) => p.profile.name === name)?.profile;
    // Only a profile that can bind waits for its guard; one without its permissions gets its status at once.
    const guardUnknown = profile?.rbac !== undefined && this.holdsPermissions(profile) && !this.guardKnown(profile.rbac.binding.kind);
    if (!this.controller.hasSynced('pods', 'namespaces', 'clusterroles', 'clusterrolebindings', 'controllerrevisions') || guardUnknown) {
      this.metrics.reconciles.inc({ profile: name, result: 'skipped' });
      return;
    }
    const end = this.metrics.reconcileSeconds.startTimer({ profile: name });
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

  /** The whole profile: its ClusterRole, the exec guard, every namespace, the status. */
  private async reconcileProfile(name: string, profile: AgentProfile | undefined): Promise<{ requeueAfterMs: number } | undefined> {
    const missing = profile?.rbac ? this.missing.get(permissionKey(profile)) : undefined;
    const role = profile?.rbac ? this.roles.get(profile.rbac.clusterRole) : undefined;
    const foreignRole = role !== undefined && role.ownedBy !== name;
    // Without its permissions a profile's RBAC is left as it is; a foreign role is revoked regardless.
    const agents = profile ? this.agentCounts(profile) : undefined;
    if (profile?.rbac && missing?.length !== 0 && !foreignRole) {
      this.metrics.reconciles.inc({ profile: name, result: 'skipped' });
      return wakeAt(await this.writeStatus(name, { profile, missing, tally: { subjects: 0, overCap: new Map(), notOurs: [] }, agents }));
    }
    if (profile) await this.recordRevision(profile);
    const plan = planProfile(this.observe(name, profile));
    const tally = { subjects: plan.subjects, overCap: plan.overCap, notOurs: [] as string[] };
    const foreign = plan.roleState === 'foreign';
    let notOurs: readonly PlanAction[] = [];
    try {
      notOurs = (await this.executor.execute(name, plan)).notOurs;
    } catch (error) {
      await this.reportFailure(name, { profile, missing, tally, foreign }, error);
      throw error;
    }
    if (plan.roleState !== 'repairing') {
      const mine = (namespace: string) => notOurs.filter((a) => a.type === 'writeBinding' && a.namespace === namespace).map(describeAction);
      this.states.replace(name, new Map([...plan.namespaces].map(([namespace, p]) => [namespace, { goneSince: p.goneSince, subjects: p.subjects, overCap: p.overCap, notOurs: mine(namespace) }])));
      // Each namespace looks again when a grace in it runs out, alone.
      for (const [namespace, p] of plan.namespaces) if (p.wakeAtMs !== undefined) this.controller.enqueueAfter(namespaceKey(name, namespace), untilMs(p.wakeAtMs));
    }
    if (profile?.rbac) this.executor.reportGuard(name, profile.rbac.clusterRole, this.execGuardProblem(profile.rbac.binding.kind));
    this.metrics.reconciles.inc({ profile: name, result: plan.actions.length > 0 ? 'applied' : 'unchanged' });
    if (profile?.rbac) this.metrics.subjects.set({ binding: profile.rbac.binding.name }, plan.subjects);
    this.metrics.plannedSubjects.observe({ scope: 'profile' }, plan.subjects);
    const countsDueAt = await this.writeStatus(name, { profile, missing, tally: { ...tally, notOurs: notOurs.map(describeAction) }, foreign, agents });
    if (agents) await this.missingAgents.report(name, agents.missingOwners);
    return wakeAt(countsDueAt);
  }

  /**
   * One namespace of a profile, planned alone; what only the whole profile decides (a ClusterRole
   * to create or repair, everything to revoke, permissions missing, a new leader) goes to it. The
   * status follows as its own step: at once when what it sums changed, else when counts are due.
   */
  private async reconcileNamespace(name: string, profile: AgentProfile | undefined, namespace: string): Promise<{ requeueAfterMs: number } | undefined> {
    const missing = profile?.rbac ? this.missing.get(permissionKey(profile)) : undefined;
    const plan = this.states.has(name) && !(profile?.rbac && missing?.length !== 0) ? planNamespace(this.observe(name, profile, namespace), namespace) : undefined;
    if (!plan) {
      this.controller.enqueue(profileKey(name));
      return;
    }
    let notOurs: readonly PlanAction[] = [];
    try {
      notOurs = (await this.executor.execute(name, plan)).notOurs;
    } catch (error) {
      await this.reportFailure(name, { profile, missing, tally: this.states.tally(name), foreign: false }, error);
      throw error;
    }
    const summed = this.states.set(name, namespace, { goneSince: plan.goneSince, subjects: plan.subjects, overCap: plan.overCap, notOurs: notOurs.map(describeAction) });
    this.metrics.plannedSubjects.observe({ scope: 'namespace' }, plan.subjects);
    this.metrics.reconciles.inc({ profile: name, result: plan.actions.length > 0 ? 'applied' : 'unchanged' });
    if (summed) this.controller.enqueue(statusKey(name));
    else this.controller.enqueueAfter(statusKey(name), untilMs((this.statusWrittenAt.get(name) ?? 0) + COUNTS_WRITE_MS));
    // A binding of an earlier version goes once the namespaces' own show its subjects, which only a
    // plan of the whole profile sees: after a change here, not on a timer while one is stuck.
    if (this.legacyBindings(name) > 0) this.controller.enqueueAfter(profileKey(name), LEGACY_RECHECK_MS);
    return wakeAt(plan.wakeAtMs);
  }

  /** The profile's status and agent counts, from what its namespaces' last plans left. */
  private async reconcileStatus(name: string, profile: AgentProfile | undefined): Promise<{ requeueAfterMs: number } | undefined> {
    const missing = profile?.rbac ? this.missing.get(permissionKey(profile)) : undefined;
    const role = profile?.rbac ? this.roles.get(profile.rbac.clusterRole) : undefined;
    // Until the profile was planned as a whole, or while it must be, its own step writes the status.
    if (!this.states.has(name) || (profile?.rbac && missing?.length !== 0) || (role !== undefined && role.ownedBy !== name)) return;
    const tally = this.states.tally(name);
    if (profile?.rbac) this.metrics.subjects.set({ binding: profile.rbac.binding.name }, tally.subjects);
    const agents = profile ? this.agentCounts(profile) : undefined;
    const countsDueAt = await this.writeStatus(name, { profile, missing, tally, foreign: false, agents });
    if (agents) await this.missingAgents.report(name, agents.missingOwners);
    return wakeAt(countsDueAt);
  }

  /** The status says why, the objects stay as they were, and the error policy retries with backoff. */
  private async reportFailure(name: string, outcome: { profile: AgentProfile | undefined; missing: readonly string[] | undefined; tally: ProfileTally; foreign: boolean }, error: unknown): Promise<void> {
    await this.writeStatus(name, { ...outcome, writeFailure: describeApiError(error) }).catch((statusError: unknown) =>
      this.logger.warn(`AgentProfile ${name}: status not written: ${describeApiError(statusError)}`),
    );
  }

  /**
   * Stores the spec in force as an agent revision (pods it injects are verified against it after
   * the next edit) and prunes the oldest beyond those kept.
   */
  private async recordRevision(profile: AgentProfile): Promise<void> {
    const namespace = this.config.lease.namespace;
    const stored = this.revisions.entries().map(([, r]) => r).filter((r) => r.profile.name === profile.name);
    // The agents injected now: the profile's, and its staged change's while it has one.
    const { stable, canary } = agentVariants(profile);
    const agents = canary ? [stable, canary.profile] : [stable];
    const generation = this.inForce.find((p) => p.profile.name === profile.name)?.generation ?? 0;
    let next = Math.max(generation, ...stored.map((r) => r.revision + 1));
    for (const agent of agents) {
      if (stored.some((r) => r.hash === profileHash(agent))) continue;
      await createObject(this.kc, revisionObject(agent, next++, namespace), { fieldManager: FIELD_MANAGER }).catch((error: unknown) => {
        if (!isConflict(error)) throw error;
      });
      this.metrics.writes.inc({ kind: 'ControllerRevision', verb: 'create' });
    }
    for (const old of revisionsToPrune(stored, new Set(agents.map(profileHash)))) {
      await deleteObject(this.kc, { apiVersion: 'apps/v1', kind: 'ControllerRevision', name: old.name, namespace });
      this.metrics.writes.inc({ kind: 'ControllerRevision', verb: 'delete' });
    }
  }

  /**
   * What profile `name`'s plan depends on, from the stores at this moment: the whole profile, or
   * (given) one namespace with the bindings of earlier versions, which hold several.
   */
  private observe(name: string, profile: AgentProfile | undefined, namespace?: string): ObservedProfile {
    const rbac = profile?.rbac;
    const namespaces = namespace === undefined ? this.namespacesOf(profile) : new Set(this.appliesIn(profile, namespace) ? [namespace] : []);
    const bindings =
      namespace === undefined
        ? this.bindings.flatMap((store) => store.entries().flatMap(([, b]) => (b.profile === name ? [b.binding] : [])))
        : [namespace, undefined].flatMap((ns) => this.bindings.flatMap((store) => [...store.indexKeys(bindingGroup(name, ns))].flatMap((k) => store.get(k)?.binding ?? [])));
    return {
      name,
      profile,
      role: rbac ? this.roles.get(rbac.clusterRole) : undefined,
      bindings,
      // Live only where bound: labelled, and (a scoped profile) picked by its selector.
      live: rbac && this.pods ? liveByNamespace((group) => this.pods?.indexKeys(group) ?? [], name, namespaces) : new Map(),
      labelledNamespaces: namespaces,
      protectedNamespaces: protectedNamespacesFor(this.config.ownNamespace),
      viewComplete: this.viewComplete(),
      execGuardProblem: this.execGuardProblem(rbac?.binding.kind),
      goneSince: this.states.goneSince(name, namespace),
      nowMs: Date.now(),
      graceMs: this.config.graceMs,
      maxPerNamespace: this.config.maxPerNamespace,
    };
  }

  /** How many bindings of earlier versions (one for several namespaces) the profile has. */
  private legacyBindings(name: string): number {
    return this.bindings.reduce((n, store) => n + [...store.indexKeys(bindingGroup(name, undefined))].length, 0);
  }

  /** Our own bindings of a kind (by label), filed by profile and namespace; a change concerns that namespace of the profile. */
  private ownBindings(resource: 'clusterrolebindings' | 'rolebindings'): WatchOptions<OwnBinding, SyncKey> {
    return {
      ...ownBindings(resource),
      // One of an earlier version holds several namespaces: the whole profile moves it.
      mapper: (view) => [view.binding.namespace === undefined ? profileKey(view.profile) : namespaceKey(view.profile, view.binding.namespace)],
    };
  }

  /** The AgentProfile's status, when profiles come from the API and something changed. */
  private async writeStatus(
    name: string,
    outcome: { profile: AgentProfile | undefined; missing: readonly string[] | undefined; tally?: ProfileTally; foreign?: boolean; writeFailure?: string; agents?: AgentCounts },
  ): Promise<number | undefined> {
    const view = this.profileObjects?.get(name);
    const verdict = this.source.verdict(name);
    if (!view || !verdict) return undefined;
    const { profile, tally } = outcome;
    const status = profileStatus({
      verdict,
      stored: view.conditions,
      rbac: profile?.rbac,
      missingPermissions: outcome.missing,
      execGuardProblem: this.execGuardProblem(profile?.rbac?.binding.kind),
      writeFailure: outcome.writeFailure,
      foreignRole: outcome.foreign === true,
      notOurs: tally?.notOurs,
      overCap: tally?.overCap,
      maxPerNamespace: this.config.maxPerNamespace,
      subjects: tally?.subjects ?? this.statusWritten.get(name)?.boundSubjects ?? 0,
      profile,
      agents: outcome.agents,
      namespaces: profile ? this.namespacesOf(profile).size : undefined,
      now: new Date(),
    });
    const written = this.statusWritten.get(name);
    if (written && sameStatus(written, status)) return undefined;
    // Pod churn moves the counts (agents, ServiceAccounts bound) all the time: those alone are written at most every COUNTS_WRITE_MS.
    const countsDueAt = (this.statusWrittenAt.get(name) ?? 0) + COUNTS_WRITE_MS;
    if (written && onlyCountsDiffer(written, status) && Date.now() < countsDueAt) return countsDueAt;
    await writeProfileStatus(this.kc, name, status);
    this.metrics.writes.inc({ kind: 'AgentProfile', verb: 'status' });
    this.statusWritten.set(name, status);
    this.statusWrittenAt.set(name, Date.now());
    return undefined;
  }
}

const GUARD_POLICIES = 'validatingadmissionpolicies';
const GUARD_BINDINGS = 'validatingadmissionpolicybindings';
/** A guard's watch of `resource`: the ClusterRoleBindings' guard by the resource's name, the other by that and its kind. */
const guardWatch = (kind: RbacBindingKind, resource: string) => (kind === 'ClusterRoleBinding' ? resource : `${resource}/${kind}`);

const RBAC_API = 'rbac.authorization.k8s.io/v1';

/** One of our bindings as its watch keeps it: which profile it serves, and what the planner sees. */
interface OwnBinding {
  /** Its key in the store. */
  readonly key: string;
  readonly profile: string;
  readonly binding: ObservedBinding;
}

/** The binding store's index group of the profiles our bindings serve: asked per namespace event, so never a walk of every binding. */
const BINDING_OWNERS = '(profiles)';

/** The binding store's index group of one profile's bindings in a namespace (undefined: those of earlier versions); never read back. */
function bindingGroup(profile: string, namespace: string | undefined): string {
  return JSON.stringify([profile, namespace ?? null]);
}

type StoredSubject = { kind?: string; name?: string; namespace?: string };

/** Our own bindings of a kind (by label), filed by the profile and namespace their labels name. */
function ownBindings(resource: 'clusterrolebindings' | 'rolebindings'): Omit<WatchOptions<OwnBinding, SyncKey>, 'mapper'> {
  const kind = resource === 'clusterrolebindings' ? 'ClusterRoleBinding' : 'RoleBinding';
  return {
    path: resourcePath({ apiVersion: RBAC_API, resource }),
    labelSelector: `${MANAGED_BY_LABEL}=${MANAGED_BY_VALUE}`,
    project: (obj: KubeObject) => {
      const stored = obj as KubeObject & { subjects?: StoredSubject[]; roleRef?: { name?: string } };
      const raw = stored.subjects ?? [];
      const subjects = normalizeSubjects(raw.flatMap((s): SaSubject[] => (s.kind === 'ServiceAccount' && s.name && s.namespace ? [{ kind: 'ServiceAccount', name: s.name, namespace: s.namespace }] : [])));
      const asStored = raw.map((s): SaSubject => ({ kind: 'ServiceAccount', name: s.name ?? '', namespace: s.namespace ?? '' }));
      const labels = obj.metadata?.labels ?? {};
      return {
        key: objectKey(obj),
        profile: labels[PROFILE_LABEL] ?? '',
        binding: {
          kind,
          name: obj.metadata?.name ?? '',
          namespace: kind === 'RoleBinding' ? obj.metadata?.namespace : labels[NAMESPACE_LABEL],
          roleRef: stored.roleRef?.name ?? '',
          subjects,
          untidy: raw.some((s) => s.kind !== 'ServiceAccount') || !sameSubjects(subjects, asStored),
        },
      };
    },
    equals: (a, b) => JSON.stringify(a) === JSON.stringify(b),
    index: (view) => [
      [bindingGroup(view.profile, view.binding.namespace), view.key],
      [BINDING_OWNERS, view.profile],
    ],
    resyncOnList: false,
  };
}

/** A ClusterRole as the planner needs it: whose it is, and (only if ours) its rules. */
function projectRole(obj: KubeObject): ObservedRole {
  const labels = obj.metadata?.labels;
  const ours = labels?.[MANAGED_BY_LABEL] === MANAGED_BY_VALUE;
  return {
    name: obj.metadata?.name ?? '',
    ownedBy: ours ? (labels?.[PROFILE_LABEL] ?? '') : undefined,
    rules: ours ? ((obj as { rules?: PolicyRule[] }).rules ?? []) : [],
  };
}

/** Keys reconciled at once: the writes of different namespaces wait for the API server side by side. */
const RECONCILE_WORKERS = 8;

/** The least time between two status writes that change only the agent counts. */
const COUNTS_WRITE_MS = 5_000;

/** A reconcile's requeue: at the earliest of the times given, if any. */
function wakeAt(...times: (number | undefined)[]): { requeueAfterMs: number } | undefined {
  const known = times.filter((t): t is number => t !== undefined);
  return known.length === 0 ? undefined : { requeueAfterMs: untilMs(Math.min(...known)) };
}

/** From now until just after `atMs` (epoch ms), so the time has passed when the key is looked at. */
function untilMs(atMs: number): number {
  return Math.max(0, atMs - Date.now()) + 50;
}

/** How often a profile with a binding of an earlier version looks again whether it may go. */
const LEGACY_RECHECK_MS = 1_000;

/** How often permissions missing for a profile are asked for again. */
const PERMISSION_RECHECK_MS = 15_000;

function permissionKey(profile: AgentProfile): string {
  return `${profile.name}@${profileHash(profile)}`;
}
