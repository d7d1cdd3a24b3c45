import { Inject, Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { INJECTION_LABEL_KEY, INJECTION_LABEL_VALUE, loadProfilesOrDefault, profileWarnings, protectedNamespacesFor, type AgentProfile } from '@outrigger/admission';
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
import { projectPod, samePodView, type PodView } from '../desired/pod-view.js';
import { MANAGED_BY_LABEL, MANAGED_BY_VALUE, PROFILE_LABEL } from '../desired/rbac-objects.js';
import { RbacSyncerMetrics } from '../metrics/rbac-syncer.metrics.js';
import { ProfileReconciler } from './profile-reconciler.js';
import { requiredPermissions } from './required-permissions.js';

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

/**
 * The controller: reflectors on pods (projections only), labelled namespaces and its own
 * ClusterRoleBindings feed a work queue keyed by profile name; the leader reconciles each key
 * (level-based, see ProfileReconciler). Every replica watches, so a new leader starts warm.
 */
@Injectable()
export class SyncerService implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger('RbacSyncer');
  private profiles: AgentProfile[] = [];
  private kc!: KubeClient;
  private pods!: Reflector<PodView>;
  private namespaces!: Reflector<true>;
  private bindings!: Reflector<string>;
  private roleBindings: Reflector<string> | undefined;
  private clusterRoles!: Reflector<string>;
  /** Only when a profile binds cluster-wide: the guard that confines those bindings' exec. */
  private guard: { policy: Reflector<GuardPolicyView>; binding: Reflector<GuardBindingView> } | undefined;
  private queue!: WorkQueue;
  private elector!: LeaderElector;
  private reconciler!: ProfileReconciler;
  private resyncTimer: NodeJS.Timeout | undefined;
  private readonly startedAt = Date.now();
  private incompleteSince: number | undefined = Date.now();

  constructor(
    @Inject(rbacSyncerConfig.KEY) private readonly config: RbacSyncerConfig,
    private readonly metrics: RbacSyncerMetrics,
  ) {}

  async onModuleInit(): Promise<void> {
    const loaded = await loadProfilesOrDefault(this.config.profilesFile);
    if (!loaded.ok) throw new Error(`PROFILES_FILE: ${loaded.error}`);
    this.profiles = loaded.value.filter((p) => p.rbac);
    this.logger.log(`profiles with RBAC: ${this.profiles.map((p) => `${p.name} → ${p.rbac?.binding.kind} ${p.rbac?.binding.name}`).join(', ') || 'none'}`);
    this.profiles.flatMap(profileWarnings).forEach((line) => this.logger.warn(line));

    this.kc = loadKubeClient(this.config.kubeconfig);
    const lease = { namespace: this.config.lease.namespace, name: this.config.lease.name };
    const missing = await missingPermissions(this.kc, requiredPermissions(this.profiles, lease, this.config.execGuardName));
    if (missing.length > 0) {
      const lines = missing.map((p) => `  - ${describePermission(p)}`).join('\n');
      throw new Error(`the rbac-syncer lacks ${missing.length} permission(s) it needs (see deploy/base/rbac-syncer/rbac.yaml):\n${lines}`);
    }

    this.queue = new WorkQueue({
      onError: (key, error, retryIn) => {
        this.metrics.reconciles.inc({ profile: key, result: 'error' });
        this.logger.warn(`reconcile ${key} failed (retry in ${retryIn} ms): ${error instanceof Error ? error.message : String(error)}`);
      },
    });
    const enqueueProfiles = (view: PodView) => view.profiles.forEach((p) => this.queue.add(p));
    const watchError = (what: string) => (_e: unknown, info: { message: string }) => this.logger.warn(`watch ${what}: ${info.message}`);
    const deadStreamTimeoutMs = this.config.watchDeadMs;

    this.pods = new Reflector<PodView>(this.kc, {
      path: resourcePath({ apiVersion: 'v1', resource: 'pods' }),
      // Whole pods are parsed a page at a time and dropped for their projection: small pages, small peaks.
      pageSize: 100,
      project: (pod) => projectPod(pod as never, this.profiles),
      equals: samePodView,
      deadStreamTimeoutMs,
      onAdd: (_k, v) => enqueueProfiles(v),
      onUpdate: (_k, v, old) => (enqueueProfiles(v), enqueueProfiles(old)),
      onDelete: (_k, old) => enqueueProfiles(old),
      onSynced: () => this.enqueueAll(),
      onError: watchError('pods'),
    });
    this.namespaces = new Reflector<true>(this.kc, {
      path: resourcePath({ apiVersion: 'v1', resource: 'namespaces' }),
      labelSelector: `${INJECTION_LABEL_KEY}=${INJECTION_LABEL_VALUE}`,
      project: () => true,
      deadStreamTimeoutMs,
      onAdd: () => this.enqueueAll(),
      onDelete: () => this.enqueueAll(),
      onSynced: () => this.enqueueAll(),
      onError: watchError('namespaces'),
    });
    // Our own bindings: a hand edit is repaired at once, not at the next resync.
    this.bindings = new Reflector<string>(this.kc, {
      path: resourcePath({ apiVersion: 'rbac.authorization.k8s.io/v1', resource: 'clusterrolebindings' }),
      labelSelector: `${MANAGED_BY_LABEL}=${MANAGED_BY_VALUE}`,
      project: (obj) => JSON.stringify([obj.metadata?.labels?.[PROFILE_LABEL] ?? '', obj['subjects'] ?? [], obj['roleRef'] ?? null]),
      deadStreamTimeoutMs,
      onUpdate: (_k, v) => this.enqueueBindingProfile(v),
      onDelete: (_k, old) => this.enqueueBindingProfile(old),
      onError: watchError('clusterrolebindings'),
    });

    // Our ClusterRoles: rule drift is repaired at once too.
    this.clusterRoles = new Reflector<string>(this.kc, {
      path: resourcePath({ apiVersion: 'rbac.authorization.k8s.io/v1', resource: 'clusterroles' }),
      labelSelector: `${MANAGED_BY_LABEL}=${MANAGED_BY_VALUE}`,
      project: (obj) => JSON.stringify([obj.metadata?.labels?.[PROFILE_LABEL] ?? '', obj['rules'] ?? []]),
      deadStreamTimeoutMs,
      onUpdate: (_k, v) => this.enqueueBindingProfile(v),
      onDelete: (_k, old) => this.enqueueBindingProfile(old),
      onError: watchError('clusterroles'),
    });
    if (this.profiles.some((p) => p.rbac?.binding.kind === 'RoleBinding')) {
      this.roleBindings = new Reflector<string>(this.kc, {
        path: resourcePath({ apiVersion: 'rbac.authorization.k8s.io/v1', resource: 'rolebindings' }),
        labelSelector: `${MANAGED_BY_LABEL}=${MANAGED_BY_VALUE}`,
        project: (obj) => JSON.stringify([obj.metadata?.labels?.[PROFILE_LABEL] ?? '', obj['subjects'] ?? [], obj['roleRef'] ?? null]),
        deadStreamTimeoutMs,
        onUpdate: (_k, v) => this.enqueueBindingProfile(v),
        onDelete: (_k, old) => this.enqueueBindingProfile(old),
        onError: watchError('rolebindings'),
      });
    }

    if (this.profiles.some((p) => p.rbac?.binding.kind === 'ClusterRoleBinding')) {
      const name = this.config.execGuardName;
      const enqueueClusterWide = () => this.profiles.filter((p) => p.rbac?.binding.kind === 'ClusterRoleBinding').forEach((p) => this.queue.add(p.name));
      const watchGuard = <P>(resource: string, project: (obj: KubeObject) => P) =>
        new Reflector<P>(this.kc, {
          path: resourcePath({ apiVersion: 'admissionregistration.k8s.io/v1', resource }),
          fieldSelector: `metadata.name=${name}`,
          project,
          deadStreamTimeoutMs,
          onAdd: enqueueClusterWide,
          onUpdate: enqueueClusterWide,
          onDelete: enqueueClusterWide,
          onSynced: enqueueClusterWide,
          onError: watchError(resource),
        });
      this.guard = {
        policy: watchGuard('validatingadmissionpolicies', projectGuardPolicy),
        binding: watchGuard('validatingadmissionpolicybindings', projectGuardBinding),
      };
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

    this.metrics.observeWatches(() =>
      Object.entries(this.reflectors()).flatMap(([resource, r]) => (r ? [{ resource, ...r.status() }] : [])),
    );
    this.metrics.observeExecGuard(() => (this.guard ? this.execGuardProblem() === undefined : undefined));
    Object.values(this.reflectors()).forEach((r) => r?.start());
    void this.queue.process((key) => this.reconcile(key));
    this.elector.start();
    this.resyncTimer = setInterval(() => this.enqueueAll(), this.config.resyncMs);
    this.resyncTimer.unref();
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.resyncTimer);
    await this.queue?.shutdown();
    await this.elector?.stop(); // releases the Lease: a standby takes over at once
    await Promise.all(Object.values(this.reflectors()).map((r) => r?.stop()));
  }

  /** Every watch by resource; absent ones (no RoleBinding profile, no cluster-wide profile) undefined. */
  private reflectors(): Record<string, Reflector<unknown> | undefined> {
    return {
      pods: this.pods,
      namespaces: this.namespaces,
      clusterrolebindings: this.bindings,
      rolebindings: this.roleBindings,
      clusterroles: this.clusterRoles,
      validatingadmissionpolicies: this.guard?.policy,
      validatingadmissionpolicybindings: this.guard?.binding,
    } as Record<string, Reflector<unknown> | undefined>;
  }

  status(): SyncerStatus {
    const watches = Object.fromEntries(Object.entries(this.reflectors()).flatMap(([resource, r]) => (r ? [[resource, r.status()]] : [])));
    const all = Object.values(watches);
    const synced = all.length > 0 && all.every((s) => s.hasSynced);
    const complete = this.viewComplete();
    return {
      profiles: this.profiles.map((p) => p.name),
      synced,
      viewComplete: complete,
      incompleteForMs: complete ? 0 : Date.now() - (this.incompleteSince ?? this.startedAt),
      leader: this.elector?.isLeader() ?? false,
      watches,
      ...(this.guard ? { execGuardProblem: this.execGuardProblem() } : {}),
    };
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
    this.profiles.forEach((p) => this.queue.add(p.name));
  }

  private enqueueBindingProfile(projection: string): void {
    const profile = (JSON.parse(projection) as [string])[0];
    if (this.profiles.some((p) => p.name === profile)) this.queue.add(profile);
  }

  private async reconcile(key: string): Promise<{ requeueAfterMs?: number } | void> {
    const profile = this.profiles.find((p) => p.name === key);
    if (!profile) return;
    const guardUnknown = profile.rbac?.binding.kind === 'ClusterRoleBinding' && !Object.values(this.guard ?? {}).every((r) => r.status().hasSynced);
    if (!this.elector.isLeader() || !this.pods.status().hasSynced || !this.namespaces.status().hasSynced || guardUnknown) {
      this.metrics.reconciles.inc({ profile: key, result: 'skipped' });
      return;
    }
    const end = this.metrics.reconcileSeconds.startTimer({ profile: key });
    try {
      const { requeueAfterMs } = await this.reconciler.reconcile(profile);
      return requeueAfterMs === undefined ? undefined : { requeueAfterMs: requeueAfterMs + 50 };
    } finally {
      end();
    }
  }
}
