import { Inject, Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import {
  AGENT_PROFILE_API_VERSION,
  agentProfileEntry,
  INJECTION_LABEL_KEY,
  INJECTION_LABEL_VALUE,
  loadProfilesFile,
  profileHash,
  profileWarnings,
  protectedNamespacesFor,
  resolveProfiles,
  type AgentProfile,
  type AgentProfileEntry,
  type ProfileInForce,
  type ProfileVerdict,
} from '@outrigger/admission';
import {
  describePermission,
  EventRecorder,
  LeaderElector,
  loadKubeClient,
  missingPermissions,
  Reflector,
  resourcePath,
  WorkQueue,
  type KubeClient,
  type KubeObject,
  type ReflectorStatus,
} from '@outrigger/kube';
import { rbacSyncerConfig, type RbacSyncerConfig } from '../config/rbac-syncer.config.js';
import { execGuardProblem, projectGuardBinding, projectGuardPolicy, type GuardBindingView, type GuardPolicyView } from '../desired/exec-guard.js';
import { profileStatus, sameStatus, type ProfileStatus, type StoredCondition } from '../desired/profile-status.js';
import { projectPod, samePodView, type PodView } from '../desired/pod-view.js';
import { MANAGED_BY_LABEL, MANAGED_BY_VALUE, PROFILE_LABEL } from '../desired/rbac-objects.js';
import { RbacSyncerMetrics } from '../metrics/rbac-syncer.metrics.js';
import { ProfileReconciler } from './profile-reconciler.js';
import { basePermissions, profilePermissions } from './required-permissions.js';
import { writeProfileStatus } from './profile-status-writer.js';

export interface SyncerStatus {
  readonly profiles: readonly string[];
  readonly synced: boolean;
  readonly viewComplete: boolean;
  /** How long the view has been incomplete (0 while complete). */
  readonly incompleteForMs: number;
  readonly leader: boolean;
  readonly watches: Record<string, ReflectorStatus>;
  /** Why the exec guard is not in force, when a profile binds cluster-wide and it is not. */
  readonly execGuardProblem?: string;
}

/** An AgentProfile as the syncer keeps it: the verdict on its spec and the conditions it carries. */
interface ProfileObjectView {
  readonly entry: AgentProfileEntry;
  readonly conditions: readonly StoredCondition[];
}

/**
 * The controller: reflectors on AgentProfiles, pods (projections only), labelled namespaces and its
 * own roles and bindings feed a work queue keyed by profile name; the leader reconciles each key
 * (level-based, see ProfileReconciler) and reports on the AgentProfile's status. Every replica
 * watches, so a new leader starts warm. Profiles come from the API, or from PROFILES_FILE.
 */
@Injectable()
export class SyncerService implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger('RbacSyncer');
  private inForce: readonly ProfileInForce[] = [];
  private verdicts = new Map<string, ProfileVerdict>();
  /** Profiles that left the in-force set: their bindings are emptied (after the grace) and forgotten. */
  private readonly retired = new Map<string, AgentProfile>();
  /** Per profile name and hash: the permissions the syncer lacks for it ([] when it has them all). */
  private readonly missing = new Map<string, string[]>();
  private readonly statusWritten = new Map<string, ProfileStatus>();
  private kc!: KubeClient;
  private profileObjects: Reflector<ProfileObjectView> | undefined;
  private pods!: Reflector<PodView>;
  private namespaces!: Reflector<true>;
  private bindings!: Reflector<string>;
  private roleBindings: Reflector<string> | undefined;
  private clusterRoles!: Reflector<string>;
  /** Only once a profile binds cluster-wide: the guard that confines those bindings' exec. */
  private guard: { policy: Reflector<GuardPolicyView>; binding: Reflector<GuardBindingView> } | undefined;
  private queue!: WorkQueue;
  private elector!: LeaderElector;
  private reconciler!: ProfileReconciler;
  private resyncTimer: NodeJS.Timeout | undefined;
  private recheckTimer: NodeJS.Timeout | undefined;
  private readonly startedAt = Date.now();
  private incompleteSince: number | undefined = Date.now();

  constructor(
    @Inject(rbacSyncerConfig.KEY) private readonly config: RbacSyncerConfig,
    private readonly metrics: RbacSyncerMetrics,
  ) {}

  async onModuleInit(): Promise<void> {
    const fromApi = !this.config.profilesFile;
    this.kc = loadKubeClient(this.config.kubeconfig);
    const lease = { namespace: this.config.lease.namespace, name: this.config.lease.name };
    let initial: AgentProfile[] = [];
    if (this.config.profilesFile) {
      const loaded = await loadProfilesFile(this.config.profilesFile);
      if (!loaded.ok) throw new Error(`PROFILES_FILE: ${loaded.error}`);
      initial = loaded.value;
    }
    // From a file, every profile's permissions are checked at startup, as a deployment error;
    // from the API, each profile's own are checked when it arrives and reported on its status.
    const required = [...basePermissions(lease, fromApi), ...initial.flatMap((p) => profilePermissions(p, this.config.execGuardName))];
    const missing = await missingPermissions(this.kc, required);
    if (missing.length > 0) {
      const lines = [...new Set(missing.map((p) => `  - ${describePermission(p)}`))].join('\n');
      throw new Error(`the rbac-syncer lacks ${missing.length} permission(s) it needs (see deploy/base/rbac-syncer/rbac.yaml):\n${lines}`);
    }

    this.queue = new WorkQueue({
      onError: (key, error, retryIn) => {
        this.metrics.reconciles.inc({ profile: key, result: 'error' });
        this.logger.warn(`reconcile ${key} failed (retry in ${retryIn} ms): ${error instanceof Error ? error.message : String(error)}`);
      },
    });
    const enqueueProfiles = (view: PodView) => view.profiles.forEach((p) => this.queue.add(p));

    this.pods = this.reflector<PodView>('pods', {
      path: resourcePath({ apiVersion: 'v1', resource: 'pods' }),
      // Whole pods are parsed a page at a time and dropped for their projection: small pages, small peaks.
      pageSize: 100,
      project: (pod) => projectPod(pod as never, this.profiles()),
      equals: samePodView,
      onAdd: (_k, v) => enqueueProfiles(v),
      onUpdate: (_k, v, old) => (enqueueProfiles(v), enqueueProfiles(old)),
      onDelete: (_k, old) => enqueueProfiles(old),
      onSynced: () => this.enqueueAll(),
    });
    this.namespaces = this.reflector<true>('namespaces', {
      path: resourcePath({ apiVersion: 'v1', resource: 'namespaces' }),
      labelSelector: `${INJECTION_LABEL_KEY}=${INJECTION_LABEL_VALUE}`,
      project: () => true,
      onAdd: () => this.enqueueAll(),
      onDelete: () => this.enqueueAll(),
      onSynced: () => this.enqueueAll(),
    });
    // Our own bindings and roles: a hand edit is repaired at once, not at the next resync.
    this.bindings = this.reflector<string>('clusterrolebindings', this.ownObjects('clusterrolebindings', ['subjects', 'roleRef']));
    this.clusterRoles = this.reflector<string>('clusterroles', this.ownObjects('clusterroles', ['rules']));
    if (fromApi) {
      this.profileObjects = this.reflector<ProfileObjectView>('agentprofiles', {
        path: resourcePath({ apiVersion: AGENT_PROFILE_API_VERSION, resource: 'agentprofiles' }),
        project: (obj) => {
          const entry = agentProfileEntry(obj);
          const conditions = (obj as { status?: { conditions?: StoredCondition[] } }).status?.conditions ?? [];
          return entry ? { entry, conditions } : undefined;
        },
        onAdd: () => this.resolveFromApi(),
        onUpdate: () => this.resolveFromApi(),
        onDelete: () => this.resolveFromApi(),
        onSynced: () => this.resolveFromApi(),
      });
    }

    this.elector = new LeaderElector(this.kc, {
      namespace: lease.namespace,
      name: lease.name,
      leaseDurationMs: this.config.lease.durationMs,
      renewDeadlineMs: Math.round((this.config.lease.durationMs * 2) / 3),
      retryPeriodMs: Math.round((this.config.lease.durationMs * 2) / 15),
      onStartedLeading: () => {
        this.metrics.leader.set(1);
        this.logger.log(`became the leader (${this.elector.identity}); reconciling every profile`);
        this.statusWritten.clear();
        this.enqueueAll();
      },
      onStoppedLeading: () => {
        this.metrics.leader.set(0);
        this.logger.warn(`lost the lease ${lease.namespace}/${lease.name}; no longer writing`);
      },
      onNewLeader: (identity) => this.logger.log(`leader is ${identity}`),
      onError: (_e, info) => this.logger.warn(`leader election: ${info.message}`),
    });
    const events = new EventRecorder(this.kc, { component: 'outrigger-rbac-syncer', instance: this.elector.identity, logger: (m) => this.logger.warn(m) });
    this.reconciler = new ProfileReconciler({
      kc: this.kc,
      view: {
        pods: () => this.pods.entries().map(([, v]) => v),
        labelledNamespaces: () => new Set(this.namespaces.keys()),
        viewComplete: () => this.viewComplete(),
        execGuardProblem: () => this.execGuardProblem(),
      },
      protectedNamespaces: protectedNamespacesFor(this.config.ownNamespace),
      graceMs: this.config.graceMs,
      events,
      metrics: this.metrics,
      log: this.logger,
    });

    this.metrics.observeWatches(() => Object.entries(this.reflectors()).flatMap(([resource, r]) => (r ? [{ resource, ...r.status() }] : [])));
    this.metrics.observeExecGuard(() => (this.guard ? this.execGuardProblem() === undefined : undefined));
    if (!fromApi) await this.useProfiles(initial.map((profile) => ({ profile, generation: 0 })));
    Object.values(this.reflectors()).forEach((r) => r?.start());
    void this.queue.process((key) => this.reconcile(key));
    this.elector.start();
    this.resyncTimer = setInterval(() => this.enqueueAll(), this.config.resyncMs);
    this.resyncTimer.unref();
    // An admin grants a new profile's permissions after creating it: notice without a restart.
    this.recheckTimer = setInterval(() => void this.recheckDenied(), PERMISSION_RECHECK_MS);
    this.recheckTimer.unref();
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.resyncTimer);
    clearInterval(this.recheckTimer);
    await this.queue?.shutdown();
    await this.elector?.stop(); // releases the Lease: a standby takes over at once
    await Promise.all(Object.values(this.reflectors()).map((r) => r?.stop()));
  }

  status(): SyncerStatus {
    const watches = Object.fromEntries(Object.entries(this.reflectors()).flatMap(([resource, r]) => (r ? [[resource, r.status()]] : [])));
    const all = Object.values(watches);
    const synced = all.length > 0 && all.every((s) => s.hasSynced);
    const complete = this.viewComplete();
    return {
      profiles: this.inForce.map((p) => p.profile.name),
      synced,
      viewComplete: complete,
      incompleteForMs: complete ? 0 : Date.now() - (this.incompleteSince ?? this.startedAt),
      leader: this.elector?.isLeader() ?? false,
      watches,
      ...(this.guard ? { execGuardProblem: this.execGuardProblem() } : {}),
    };
  }

  /** The profiles with RBAC in force whose permissions the syncer holds. */
  private profiles(): AgentProfile[] {
    return this.inForce.flatMap(({ profile }) => (profile.rbac && this.missing.get(permissionKey(profile))?.length === 0 ? [profile] : []));
  }

  private resolveFromApi(): void {
    const reflector = this.profileObjects;
    if (!reflector?.status().hasSynced) return;
    const set = resolveProfiles(reflector.entries().map(([, view]) => view.entry), this.inForce);
    for (const verdict of set.verdicts) {
      const before = this.verdicts.get(verdict.name);
      if (before?.message !== verdict.message || before.generation !== verdict.generation) {
        const line = `AgentProfile ${verdict.name} generation ${verdict.generation}: ${verdict.message}`;
        if (verdict.accepted) this.logger.log(line);
        else this.logger.error(line);
        this.queue.add(verdict.name); // its status follows
      }
    }
    this.verdicts = new Map(set.verdicts.map((v) => [v.name, v]));
    void this.useProfiles(set.inForce);
  }

  /**
   * Puts a new set of profiles in force: checks each new one's permissions, starts the watches it
   * needs, re-projects the pods (which profiles a pod belongs to depends on them), retires the
   * profiles that left, and reconciles everything.
   */
  private async useProfiles(next: readonly ProfileInForce[]): Promise<void> {
    const before = new Map(this.inForce.map((p) => [p.profile.name, p.profile]));
    this.inForce = next;
    for (const { profile } of next) {
      const old = before.get(profile.name);
      if (old && profileHash(old) !== profileHash(profile)) this.retired.set(profile.name, old); // a renamed role or binding is emptied
      if (old && profileHash(old) === profileHash(profile)) continue;
      if (profile.rbac) this.missing.delete(permissionKey(profile));
      profileWarnings(profile).forEach((line) => this.logger.warn(line));
    }
    for (const [name, old] of before) if (!next.some((p) => p.profile.name === name)) this.retired.set(name, old);
    await Promise.all(next.map(({ profile }) => this.checkPermissions(profile)));
    if (next !== this.inForce) return; // a newer set arrived meanwhile
    const withRbac = this.profiles();
    if (!this.roleBindings && withRbac.some((p) => p.rbac?.binding.kind === 'RoleBinding')) {
      this.roleBindings = this.reflector<string>('rolebindings', this.ownObjects('rolebindings', ['subjects', 'roleRef'])).start();
    }
    if (!this.guard && withRbac.some((p) => p.rbac?.binding.kind === 'ClusterRoleBinding')) this.watchGuard();
    this.pods.relist();
    this.enqueueAll();
  }

  private async checkPermissions(profile: AgentProfile): Promise<void> {
    const key = permissionKey(profile);
    if (!profile.rbac || this.missing.has(key)) return;
    try {
      const missing = await missingPermissions(this.kc, profilePermissions(profile, this.config.execGuardName));
      this.missing.set(key, [...new Set(missing.map(describePermission))]);
      if (missing.length > 0) this.logger.error(`AgentProfile ${profile.name}: not synced, the rbac-syncer lacks ${this.missing.get(key)?.join(', ')}`);
    } catch (error) {
      this.logger.warn(`AgentProfile ${profile.name}: cannot check permissions yet: ${error instanceof Error ? error.message : String(error)}`);
      setTimeout(() => void this.checkPermissions(profile).then(() => (this.pods.relist(), this.enqueueAll())), 5_000).unref();
    }
  }

  /** Asks again for the profiles the syncer lacked permissions for; those now granted take effect. */
  private async recheckDenied(): Promise<void> {
    const denied = this.inForce.filter(({ profile }) => (this.missing.get(permissionKey(profile))?.length ?? 0) > 0);
    if (denied.length === 0) return;
    denied.forEach(({ profile }) => this.missing.delete(permissionKey(profile)));
    await Promise.all(denied.map(({ profile }) => this.checkPermissions(profile)));
    if (denied.some(({ profile }) => this.missing.get(permissionKey(profile))?.length === 0)) await this.useProfiles(this.inForce);
    else denied.forEach(({ profile }) => this.queue.add(profile.name));
  }

  private watchGuard(): void {
    const name = this.config.execGuardName;
    const enqueueClusterWide = () => this.profiles().filter((p) => p.rbac?.binding.kind === 'ClusterRoleBinding').forEach((p) => this.queue.add(p.name));
    const watch = <P>(resource: string, project: (obj: KubeObject) => P) =>
      this.reflector<P>(resource, {
        path: resourcePath({ apiVersion: 'admissionregistration.k8s.io/v1', resource }),
        fieldSelector: `metadata.name=${name}`,
        project,
        onAdd: enqueueClusterWide,
        onUpdate: enqueueClusterWide,
        onDelete: enqueueClusterWide,
        onSynced: enqueueClusterWide,
      }).start();
    this.guard = { policy: watch('validatingadmissionpolicies', projectGuardPolicy), binding: watch('validatingadmissionpolicybindings', projectGuardBinding) };
  }

  private reflector<P>(what: string, options: Omit<ConstructorParameters<typeof Reflector<P>>[1], 'deadStreamTimeoutMs' | 'onError'>): Reflector<P> {
    return new Reflector<P>(this.kc, {
      ...options,
      deadStreamTimeoutMs: this.config.watchDeadMs,
      onError: (_e, info) => this.logger.warn(`watch ${what}: ${info.message}`),
    });
  }

  /** Our own objects of a kind, projected to their profile label and the fields we keep equal. */
  private ownObjects(resource: string, fields: readonly string[]) {
    const enqueue = (projection: string) => {
      const profile = (JSON.parse(projection) as [string])[0];
      if (this.inForce.some((p) => p.profile.name === profile) || this.retired.has(profile)) this.queue.add(profile);
    };
    return {
      path: resourcePath({ apiVersion: 'rbac.authorization.k8s.io/v1', resource }),
      labelSelector: `${MANAGED_BY_LABEL}=${MANAGED_BY_VALUE}`,
      project: (obj: KubeObject) => JSON.stringify([obj.metadata?.labels?.[PROFILE_LABEL] ?? '', ...fields.map((f) => obj[f] ?? null)]),
      onUpdate: (_k: string, v: string) => enqueue(v),
      onDelete: (_k: string, old: string) => enqueue(old),
    };
  }

  /** Every watch by resource; absent ones (not needed by any profile yet) undefined. */
  private reflectors(): Record<string, Reflector<unknown> | undefined> {
    return {
      agentprofiles: this.profileObjects,
      pods: this.pods,
      namespaces: this.namespaces,
      clusterrolebindings: this.bindings,
      rolebindings: this.roleBindings,
      clusterroles: this.clusterRoles,
      validatingadmissionpolicies: this.guard?.policy,
      validatingadmissionpolicybindings: this.guard?.binding,
    } as Record<string, Reflector<unknown> | undefined>;
  }

  /** Undefined when no profile binds cluster-wide or the guard is in force; unknown until both watches listed. */
  private execGuardProblem(): string | undefined {
    if (!this.guard) return undefined;
    const { policy, binding } = this.guard;
    if (!policy.status().hasSynced || !binding.status().hasSynced) return 'exec guard not known yet (its watches have not listed)';
    const name = this.config.execGuardName;
    return execGuardProblem(name, policy.get(name), binding.get(name));
  }

  private viewComplete(): boolean {
    const complete = [this.pods, this.namespaces].every((r) => r?.status().viewComplete === true);
    if (complete) this.incompleteSince = undefined;
    else this.incompleteSince ??= Date.now();
    return complete;
  }

  private enqueueAll(): void {
    this.inForce.forEach((p) => this.queue?.add(p.profile.name));
    this.verdicts.forEach((_v, name) => this.queue?.add(name));
    this.retired.forEach((_p, name) => this.queue?.add(name));
  }

  private async reconcile(key: string): Promise<{ requeueAfterMs?: number } | void> {
    const profile = this.inForce.find((p) => p.profile.name === key)?.profile;
    const retired = this.retired.get(key);
    const guardUnknown = profile?.rbac?.binding.kind === 'ClusterRoleBinding' && !Object.values(this.guard ?? {}).every((r) => r.status().hasSynced);
    if (!this.elector.isLeader() || !this.pods.status().hasSynced || !this.namespaces.status().hasSynced || guardUnknown) {
      this.metrics.reconciles.inc({ profile: key, result: 'skipped' });
      return;
    }
    const end = this.metrics.reconcileSeconds.startTimer({ profile: key });
    try {
      let requeueAfterMs: number | undefined;
      if (retired?.rbac && bindingId(retired) !== bindingId(profile)) {
        // Its pods no longer count for that binding: it empties as their grace runs out.
        const out = await this.reconciler.retire(retired);
        if (out.subjects === 0 && out.requeueAfterMs === undefined) this.retired.delete(key);
        requeueAfterMs = out.requeueAfterMs;
      } else if (retired) {
        this.retired.delete(key);
      }
      let subjects = 0;
      const missing = profile ? this.missing.get(permissionKey(profile)) : undefined;
      if (profile?.rbac && missing?.length === 0) {
        const out = await this.reconciler.reconcile(profile);
        subjects = out.subjects;
        requeueAfterMs = Math.min(requeueAfterMs ?? Infinity, out.requeueAfterMs ?? Infinity);
      }
      await this.writeStatus(key, profile, subjects, missing);
      return Number.isFinite(requeueAfterMs) && requeueAfterMs !== undefined ? { requeueAfterMs: requeueAfterMs + 50 } : undefined;
    } finally {
      end();
    }
  }

  /** The AgentProfile's status, when profiles come from the API and something changed. */
  private async writeStatus(name: string, profile: AgentProfile | undefined, subjects: number, missing: readonly string[] | undefined): Promise<void> {
    const view = this.profileObjects?.get(name);
    const verdict = this.verdicts.get(name);
    if (!view || !verdict) return;
    const status = profileStatus({
      verdict,
      stored: view.conditions,
      rbac: profile?.rbac,
      missingPermissions: missing,
      execGuardProblem: profile?.rbac?.binding.kind === 'ClusterRoleBinding' ? this.execGuardProblem() : undefined,
      subjects,
      now: new Date(),
    });
    const written = this.statusWritten.get(name);
    if (written && sameStatus(written, status)) return;
    await writeProfileStatus(this.kc, name, status);
    this.metrics.writes.inc({ kind: 'AgentProfile', verb: 'status' });
    this.statusWritten.set(name, status);
  }
}

/** How often permissions missing for a profile are asked for again. */
const PERMISSION_RECHECK_MS = 15_000;

function bindingId(profile: AgentProfile | undefined): string | undefined {
  return profile?.rbac ? `${profile.rbac.binding.kind}/${profile.rbac.binding.name}` : undefined;
}

function permissionKey(profile: AgentProfile): string {
  return `${profile.name}@${profileHash(profile)}`;
}
