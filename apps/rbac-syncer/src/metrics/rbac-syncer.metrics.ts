import { Inject, Injectable } from '@nestjs/common';
import { buildInfo, optionalGauge, WatchMetrics } from '@outrigger/service';
import { AGENT_STATES, type AgentStateName } from '@outrigger/sidecar';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { RBAC_SYNCER_VERSION } from '../config/version.js';

/** One profile's live opted-in pods by the agent they run, read at scrape time. */
export interface AgentSample {
  readonly profile: string;
  readonly counts: Readonly<Record<AgentStateName, number>>;
}

/** The syncer's own metrics, registered once on the service registry. */
@Injectable()
export class RbacSyncerMetrics {
  readonly subjects: Gauge<'binding'>;
  readonly reconciles: Counter<'profile' | 'result'>;
  readonly reconcileSeconds: Histogram<'profile'>;
  readonly plannedSubjects: Histogram<'scope'>;
  readonly writes: Counter<'kind' | 'verb'>;
  readonly staleWrites: Counter<'kind'>;
  readonly watches: WatchMetrics;
  readonly leader: Gauge;
  readonly execGuard: Gauge;
  readonly agentPods: Gauge<'profile' | 'state'>;
  private execGuardSource: () => boolean | undefined = () => undefined;
  private agentSource: () => readonly AgentSample[] = () => [];

  constructor(@Inject(Registry) registry: Registry) {
    const registers = [registry];
    this.subjects = new Gauge({ name: 'outrigger_rbac_syncer_binding_subjects', help: 'Subjects in each managed binding (after the last reconcile).', labelNames: ['binding'], registers });
    this.reconciles = new Counter({ name: 'outrigger_rbac_syncer_reconciles_total', help: 'Reconciles by profile and result (unchanged, applied, error, skipped, waiting).', labelNames: ['profile', 'result'], registers });
    this.reconcileSeconds = new Histogram({
      name: 'outrigger_rbac_syncer_reconcile_duration_seconds',
      help: 'Time of one reconcile of a profile.',
      labelNames: ['profile'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers,
    });
    this.plannedSubjects = new Histogram({
      name: 'outrigger_rbac_syncer_planned_subjects',
      help: 'ServiceAccounts bound once a reconcile\'s plan is done, by its scope: a whole profile, or one namespace of it (a pod change plans its namespace only).',
      labelNames: ['scope'],
      buckets: [0, 1, 10, 100, 1_000, 10_000, 100_000],
      registers,
    });
    this.writes = new Counter({ name: 'outrigger_rbac_syncer_api_writes_total', help: 'Writes to the API server by kind and verb.', labelNames: ['kind', 'verb'], registers });
    this.staleWrites = new Counter({
      name: 'outrigger_rbac_syncer_stale_writes_total',
      help: 'Writes not made because the object had changed since the watch showed it (planned again once the watch shows the change), by kind.',
      labelNames: ['kind'],
      registers,
    });
    this.watches = new WatchMetrics(registry, 'outrigger_rbac_syncer');
    buildInfo(registry, 'outrigger_rbac_syncer', RBAC_SYNCER_VERSION);
    // profile × state only: never a label per pod, workload or namespace.
    this.agentPods = new Gauge({
      name: 'outrigger_rbac_syncer_agent_pods',
      help: 'Live opted-in pods in labelled namespaces by profile and the agent they run (current, outdated, missing).',
      labelNames: ['profile', 'state'],
      registers,
      collect: () => {
        this.agentPods.reset();
        for (const { profile, counts } of this.agentSource()) for (const state of AGENT_STATES) this.agentPods.set({ profile, state }, counts[state]);
      },
    });
    this.leader = new Gauge({ name: 'outrigger_rbac_syncer_leader', help: '1 while this replica holds the Lease.', registers });
    this.execGuard = optionalGauge({
      registry,
      name: 'outrigger_rbac_syncer_exec_guard_in_force',
      help: '1 while the exec guard of every kind of binding the profiles use is in force, 0 while a profile\'s bindings are kept empty without it; absent when no profile binds.',
      value: () => {
        const inForce = this.execGuardSource();
        return inForce === undefined ? undefined : Number(inForce);
      },
    });
  }

  /** Where the exec guard gauge reads from at scrape time. */
  observeExecGuard(source: () => boolean | undefined): void {
    this.execGuardSource = source;
  }

  /** Where the agent counts are read from at scrape time. */
  observeAgents(source: () => readonly AgentSample[]): void {
    this.agentSource = source;
  }
}
