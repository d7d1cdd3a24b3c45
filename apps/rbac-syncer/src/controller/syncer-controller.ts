import { readFile } from 'node:fs/promises';
import { Inject, Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { INJECTION_LABEL_KEY, INJECTION_LABEL_VALUE, namespacesHeldAnnotations, type NamespacesHeld, protectedNamespacesFor } from '@outrigger/admission';
import { AGENT_PROFILE_API_VERSION, AGENT_PROFILE_PLURAL, type AgentProfile, agentProfileEntry, profileHash, type ProfileInForce, ProfileSource, type RbacBindingKind } from '@outrigger/agent-profiles';
import { Controller, describePermission, EventRecorder, missingPermissions, resourcePath, type KubeClient, type KubeObject, type ReflectorStatus } from '@outrigger/kube';
import { execGuardName, holderVersionAnnotations, projectGuardBinding, projectGuardPolicy, rbacSyncerBasePermissions, rbacSyncerProfilePermissions } from '@outrigger/install';
import { KUBE_CLIENT } from '@outrigger/service';
import { type AgentRevision, parseAgentRevision } from '@outrigger/sidecar';
import { rbacSyncerConfig, type RbacSyncerConfig } from '../config/rbac-syncer.config.js';
import { RBAC_SYNCER_VERSION } from '../config/version.js';
import { agentCountEntries, type AgentCountValue } from '../desired/agent-counts.js';
import { podSubjectEntries } from '../desired/live-subjects.js';
import { POD_PROTOBUF_SCHEMA, podViewKey, projectPod, samePodView, type PodView } from '../desired/pod-view.js';
import type { StoredCondition } from '../desired/profile-status.js';
import { MANAGED_BY_LABEL, MANAGED_BY_VALUE } from '../desired/rbac-objects.js';
import { RbacSyncerMetrics } from '../metrics/rbac-syncer.metrics.js';
import type { ObservedRole } from '../plan/observed-profile.js';
import { MissingAgentEvents } from './missing-agent-events.js';
import { PlanExecutor } from './plan-executor.js';
import { ProfileExclusion } from './profile-exclusion.js';
import { ProfilePermissions } from './profile-permissions.js';
import { ProfileStatusWriter } from './profile-status-writer.js';
import { clusterRolesWatch, GUARD_BINDINGS, GUARD_POLICIES, guardWatchName, type OwnBinding, ownBindingsWatch } from './rbac-watches.js';
import { describeSyncKey, namespaceKey, profileKey, type SyncKey, syncKeyId } from './sync-key.js';
import { SyncerReconciler } from './syncer-reconciler.js';
import { type NamespaceView, type ProfileObjectView, sameNamespace, SyncerView } from './syncer-view.js';

export interface SyncerStatus {
  readonly profiles: readonly string[];
  readonly synced: boolean;
  readonly viewComplete: boolean;
  /** How long the view has been incomplete (0 while complete). */
  readonly incompleteForMs: number;
  readonly leader: boolean;
  readonly watches: Record<string, ReflectorStatus>;
  /** The labelled namespaces held: how many, and their digest (`namespacesDigest`), which `outrigger check` compares with the API server's. */
  readonly namespaces?: NamespacesHeld;
  /** Why an exec guard the profiles need is not in force, when one is not. */
  readonly execGuardProblem?: string;
}

/**
 * The rbac-syncer's controller, declared: reflectors on AgentProfiles, pods (projections only),
 * labelled namespaces, every ClusterRole, its own bindings and the exec guards feed a work queue
 * of SyncKeys. A change of a profile, its ClusterRole or an exec guard queues the profile, planned
 * as a whole; a pod, binding or namespace change queues only that namespace of the profiles
 * concerned, planned alone. The leader reconciles each key (SyncerReconciler: observe → plan →
 * execute); keys run side by side, a whole-profile step alone within its profile
 * (ProfileExclusion). Every replica watches, so a new leader starts warm. Profiles come from the
 * API, or from PROFILES_FILE; this class also keeps which are in force.
 */
@Injectable()
export class SyncerController implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger('RbacSyncer');
  private inForce: readonly ProfileInForce[] = [];
  private readonly source = new ProfileSource(this.logger);
  private readonly permissions: ProfilePermissions;
  private readonly exclusion = new ProfileExclusion(RECONCILE_WORKERS);
  private controller!: Controller<SyncKey>;
  private view!: SyncerView;
  private reconciler!: SyncerReconciler;
  private recheckTimer: NodeJS.Timeout | undefined;

  constructor(
    @Inject(rbacSyncerConfig.KEY) private readonly config: RbacSyncerConfig,
    private readonly metrics: RbacSyncerMetrics,
    @Inject(KUBE_CLIENT) private readonly kc: KubeClient,
  ) {
    this.permissions = new ProfilePermissions(kc, config.execGuardName, this.logger);
  }

  async onModuleInit(): Promise<void> {
    const fromApi = !this.config.profilesFile;
    const initial = await this.profilesFromFile();
    await this.checkStartupPermissions(fromApi, initial);
    this.controller = new Controller<SyncKey>(this.kc, {
      keys: () => this.profileKeys().map(profileKey),
      keyId: syncKeyId,
      queue: { concurrency: RECONCILE_WORKERS },
      log: this.logger,
      resyncMs: this.config.resyncMs,
      deadStreamTimeoutMs: this.config.watchDeadMs,
      leaderElection: {
        ...this.config.lease,
        // The namespaces it binds by and its version, where `outrigger check` reads them whatever NetworkPolicy guards this pod.
        annotations: (identity) => ({ ...namespacesHeldAnnotations(this.view.heldNamespaces()), ...holderVersionAnnotations(identity, RBAC_SYNCER_VERSION) }),
        onStartedLeading: () => {
          this.metrics.leader.set(1);
          this.logger.log(`became the leader (${this.controller.identity}); reconciling every profile`);
          this.reconciler.newLeader();
        },
        onStoppedLeading: () => {
          this.metrics.leader.set(0);
          this.logger.warn(`lost the lease ${this.config.lease.namespace}/${this.config.lease.name}; no longer writing`);
        },
      },
    });
    const revisions = this.controller.watches<AgentRevision>('controllerrevisions', {
      path: resourcePath({ apiVersion: 'apps/v1', resource: 'controllerrevisions', namespace: this.config.lease.namespace }),
      labelSelector: `${MANAGED_BY_LABEL}=${MANAGED_BY_VALUE}`,
      project: parseAgentRevision,
      mapper: (revision) => [profileKey(revision.profile.name)],
      resyncOnList: false,
    });
    const view = (this.view = new SyncerView({
      revisions,
      namespaces: this.controller.watches<NamespaceView>('namespaces', {
        path: resourcePath({ apiVersion: 'v1', resource: 'namespaces' }),
        labelSelector: `${INJECTION_LABEL_KEY}=${INJECTION_LABEL_VALUE}`,
        project: (namespace) => ({ name: namespace.metadata?.name ?? '', labels: namespace.metadata?.labels ?? {}, resourceVersion: namespace.metadata?.resourceVersion ?? '' }),
        equals: sameNamespace,
        onChange: () => this.view.forgetScopes(),
        mapper: (namespace) => this.profileKeys().map((profile) => namespaceKey(profile, namespace.name)),
      }),
      // Every ClusterRole, ours or not: a profile naming a role that is not Outrigger's binds nothing.
      roles: this.controller.watches<ObservedRole>('clusterroles', { ...clusterRolesWatch(), mapper: (role) => this.profilesNaming(role).map(profileKey) }),
      revisionNamespace: this.config.lease.namespace,
      protectedNamespaces: protectedNamespacesFor(this.config.ownNamespace),
    }));
    this.watchBindings('clusterrolebindings');
    if (fromApi) {
      view.profileObjects = this.controller.watches<ProfileObjectView>(AGENT_PROFILE_PLURAL, {
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
    this.reconciler = new SyncerReconciler({
      config: this.config,
      view,
      permissions: this.permissions,
      executor: new PlanExecutor({ kc: this.kc, events, metrics: this.metrics, log: this.logger }),
      statuses: new ProfileStatusWriter(this.kc, this.metrics),
      missingAgents: new MissingAgentEvents(this.kc, events, this.logger),
      metrics: this.metrics,
      inForce: (name) => this.inForce.find((p) => p.profile.name === name),
      verdict: (name) => this.source.verdict(name),
      queue: this.controller,
      log: this.logger,
    });
    this.metrics.observeAgents(() => (view.pods ? this.inForce.map(({ profile }) => ({ profile: profile.name, counts: view.agentCounts(profile) })) : []));
    this.metrics.watches.observe(() => this.controller.status().watches);
    this.metrics.observeExecGuard(() => (this.guardKinds().size > 0 ? view.execGuardProblems(this.guardKinds()) === undefined : undefined));
    if (!fromApi) await this.useProfiles(initial.map((profile) => ({ profile, generation: 0 })));
    this.controller.run(
      (key) => this.exclusion.run(key, () => this.reconciler.reconcile(key)),
      (key, error, retryIn) => {
        this.metrics.reconciles.inc({ profile: key.profile, result: 'error' });
        this.logger.warn(`reconcile ${describeSyncKey(key)} failed (retry in ${retryIn} ms): ${error instanceof Error ? error.message : String(error)}`);
      },
    );
    // Pods are judged against the stored agent revisions: list those first, so no pod is judged without them.
    void revisions.whenSynced().then(() => this.watchPods());
    // An admin grants a new profile's permissions after creating it: notice without a restart.
    this.recheckTimer = setInterval(() => void this.recheckDenied(), PERMISSION_RECHECK_MS);
    this.recheckTimer.unref();
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.recheckTimer);
    await this.controller?.shutdown();
  }

  status(): SyncerStatus {
    const profiles = this.inForce.map((p) => p.profile.name);
    // Before onModuleInit (or if it failed): nothing watched yet.
    if (!this.controller) return { profiles, synced: false, viewComplete: false, incompleteForMs: 0, leader: false, watches: {} };
    const { watches, synced, leader } = this.controller.status();
    const complete = this.view.viewComplete();
    const guards = this.guardKinds();
    return {
      profiles,
      synced: synced && this.view.pods !== undefined,
      viewComplete: complete,
      incompleteForMs: this.view.incompleteForMs(),
      leader,
      watches,
      namespaces: this.view.heldNamespaces(),
      ...(guards.size > 0 ? { execGuardProblem: this.view.execGuardProblems(guards) } : {}),
    };
  }

  /** From a file, every profile's permissions are checked at startup, as a deployment error. */
  private async profilesFromFile(): Promise<AgentProfile[]> {
    const file = this.config.profilesFile;
    if (!file) return [];
    const text = await readFile(file, 'utf8').catch((error: Error) => {
      throw new Error(`PROFILES_FILE ${file}: cannot be read (${error.message})`);
    });
    const loaded = this.source.fromFile(text);
    if (!loaded.ok) throw new Error(`PROFILES_FILE ${file}: ${loaded.error}`);
    return loaded.value.inForce.map((p) => p.profile);
  }

  /** The syncer's own permissions, and a file's profiles'; from the API, each profile's are checked when it arrives and reported on its status. */
  private async checkStartupPermissions(fromApi: boolean, initial: readonly AgentProfile[]): Promise<void> {
    const required = [...rbacSyncerBasePermissions(this.config.lease, fromApi), ...initial.flatMap((p) => rbacSyncerProfilePermissions(p, this.config.execGuardName))];
    const missing = await missingPermissions(this.kc, required);
    if (missing.length > 0) {
      const lines = [...new Set(missing.map((p) => `  - ${describePermission(p)}`))].join('\n');
      throw new Error(`the rbac-syncer lacks ${missing.length} permission(s) it needs (see deploy/base/rbac-syncer/rbac.yaml):\n${lines}`);
    }
  }

  private watchPods(): void {
    this.view.pods = this.controller.watches<PodView, AgentCountValue>('pods', {
      path: resourcePath({ apiVersion: 'v1', resource: 'pods' }),
      // Whole pods are parsed a page at a time and dropped for their projection: small pages, small peaks.
      pageSize: this.config.podPageSize,
      streamingList: this.config.podStreamingList,
      ...(this.config.podProtobuf ? { protobuf: POD_PROTOBUF_SCHEMA } : {}),
      project: (pod) =>
        projectPod(
          pod as never,
          this.inForce.map((p) => p.profile),
          { revisions: (profile, hash) => this.view.revision(profile, hash), lagMs: this.config.specChangeLagMs },
          (profile) => this.permissions.holds(profile),
        ),
      equals: samePodView,
      // Pods of one ServiceAccount share a projection; the index says which ServiceAccounts have
      // live pods, and counts the pods of each profile by the agent they run.
      share: podViewKey,
      index: (view) => [...podSubjectEntries(view), ...agentCountEntries(view)],
      mapper: (view) => view.agents.map((agent) => namespaceKey(agent.profile, view.namespace)),
    });
  }

  /** Our own bindings of a kind; a change concerns that namespace of the profile (one of an earlier version, holding several, the whole profile). */
  private watchBindings(resource: 'clusterrolebindings' | 'rolebindings'): void {
    const mapper = (view: OwnBinding) => [view.binding.namespace === undefined ? profileKey(view.profile) : namespaceKey(view.profile, view.binding.namespace)];
    this.view.bindings.push(this.controller.watches(resource, { ...ownBindingsWatch(resource), mapper }));
  }

  /** The exec guard of a kind of binding, its policy and binding by name: their changes concern every profile that binds so. */
  private watchGuard(kind: RbacBindingKind): void {
    const name = execGuardName(kind, this.config.execGuardName);
    const bindingSo = () => this.profiles().flatMap((p) => (p.rbac?.binding.kind === kind ? [profileKey(p.name)] : []));
    const watch = <P>(resource: string, project: (obj: KubeObject) => P) =>
      this.controller.watches<P>(guardWatchName(kind, resource), {
        path: resourcePath({ apiVersion: 'admissionregistration.k8s.io/v1', resource }),
        fieldSelector: `metadata.name=${name}`,
        project,
        mapper: bindingSo,
      });
    this.view.guards.set(kind, { name, policy: watch(GUARD_POLICIES, projectGuardPolicy), binding: watch(GUARD_BINDINGS, projectGuardBinding) });
  }

  /** The profiles with RBAC in force whose permissions the syncer holds. */
  private profiles(): AgentProfile[] {
    return this.inForce.flatMap(({ profile }) => (this.permissions.holds(profile) ? [profile] : []));
  }

  /** The kinds of binding the profiles whose permissions the syncer holds bind by: the guards they need. */
  private guardKinds(): Set<RbacBindingKind> {
    return new Set(this.profiles().flatMap((p) => (p.rbac ? [p.rbac.binding.kind] : [])));
  }

  /** Every profile the syncer answers for: listed, in force, or named by a binding of ours (to empty it). */
  private profileKeys(): string[] {
    return [...new Set([...this.inForce.map((p) => p.profile.name), ...this.source.names(), ...this.view.bindingOwners()])];
  }

  private profilesNaming(role: ObservedRole): string[] {
    const naming = this.inForce.filter((p) => p.profile.rbac?.clusterRole === role.name).map((p) => p.profile.name);
    return role.ownedBy ? [...naming, role.ownedBy] : naming;
  }

  private resolveFromApi(): void {
    const reflector = this.view.profileObjects;
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
    this.view.forgetScopes();
    for (const { profile } of next) {
      const old = before.get(profile.name);
      if (!old || profileHash(old) !== profileHash(profile)) this.permissions.forget(profile);
    }
    await Promise.all(next.map(({ profile }) => this.permissions.check(profile, () => this.reprojectAll())));
    if (next !== this.inForce) return; // a newer set arrived meanwhile
    // Watches only some profiles need, declared when the first such profile arrives.
    if (!this.controller.hasWatch('rolebindings') && this.profiles().some((p) => p.rbac?.binding.kind === 'RoleBinding')) this.watchBindings('rolebindings');
    for (const kind of this.guardKinds()) if (!this.view.guards.has(kind)) this.watchGuard(kind);
    this.reprojectAll();
  }

  /** Which profiles a pod belongs to depends on the profiles and the permissions held: project every pod again, reconcile every key. */
  private reprojectAll(): void {
    this.view.pods?.relist();
    this.controller.enqueueAll();
  }

  /** Asks again for the profiles the syncer lacked permissions for; those now granted take effect. */
  private async recheckDenied(): Promise<void> {
    const denied = this.inForce.filter(({ profile }) => this.permissions.lacks(profile));
    if (denied.length === 0) return;
    denied.forEach(({ profile }) => this.permissions.forget(profile));
    await Promise.all(denied.map(({ profile }) => this.permissions.check(profile, () => this.reprojectAll())));
    if (denied.some(({ profile }) => this.permissions.holds(profile))) await this.useProfiles(this.inForce);
    else denied.forEach(({ profile }) => this.controller.enqueue(profileKey(profile.name)));
  }
}

/** Keys reconciled at once: the writes of different namespaces wait for the API server side by side. */
const RECONCILE_WORKERS = 8;

/** How often permissions missing for a profile are asked for again. */
const PERMISSION_RECHECK_MS = 15_000;
