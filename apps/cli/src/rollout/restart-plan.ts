import { type WorkloadRef, workloadName } from '../agents/workload-owner.js';
import { rolloutStatus } from './rollout-status.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- API objects read field by field below

/** A workload whose pods need a restart, and the object as read just before planning (undefined: gone). */
export interface RestartTarget {
  readonly workload: WorkloadRef;
  /** Its pods that run an outdated agent or none. */
  readonly pods: number;
  readonly object: Json | undefined;
}

export type RestartDecision = { readonly target: RestartTarget; readonly action: 'restart' } | { readonly target: RestartTarget; readonly action: 'skip'; readonly reason: string };

/**
 * Restart what a restart replaces safely, through the workload's own strategy; skip, saying why,
 * what it would not: pods nothing re-creates, runs that end on their own, workloads someone
 * paused or that are already rolling.
 */
export function planRestarts(targets: readonly RestartTarget[]): RestartDecision[] {
  return targets.map((target) => {
    const reason = skipReason(target);
    return reason === undefined ? { target, action: 'restart' } : { target, action: 'skip', reason };
  });
}

function skipReason({ workload, object }: RestartTarget): string | undefined {
  switch (workload.kind) {
    case 'Pod':
      return 'a bare pod: nothing re-creates it; delete it and create it again';
    case 'Job':
      return 'a Job runs to completion; the Job created next gets the agent in force';
    case 'CronJob':
      return 'a CronJob: its next run gets the agent in force';
    case 'ReplicaSet':
      return 'a ReplicaSet no Deployment owns does not replace its pods when its template changes; delete them';
  }
  if (!workload.known || !['Deployment', 'StatefulSet', 'DaemonSet'].includes(workload.kind)) {
    return `controlled by ${workload.kind} (${workload.apiVersion}), which outrigger does not restart; restart it the way its operator does`;
  }
  if (!object) return `${workloadName(workload)} is gone`;
  if (workload.kind === 'Deployment' && object.spec?.paused === true) return 'paused (kubectl rollout pause): restart it once its owner resumes it';
  if (workload.kind !== 'Deployment') {
    const strategy = object.spec?.updateStrategy ?? {};
    if (strategy.type === 'OnDelete') return 'updateStrategy OnDelete: its pods are replaced only when deleted';
    const partition = strategy.rollingUpdate?.partition;
    if (workload.kind === 'StatefulSet' && typeof partition === 'number' && partition > 0) return `partitioned (partition ${partition}): pods below ordinal ${partition} would keep their agent`;
  }
  const status = rolloutStatus(workload.kind, object);
  if (status.state === 'rolling') return `already rolling out (${status.message}); run again once it is done`;
  if (status.state === 'failed') return `its last rollout failed (${status.message}); fix it first`;
  return undefined;
}

/** The pod-template patch `kubectl rollout restart` makes: a changed template starts a rollout under the workload's strategy. */
export function restartPatch(now: Date): Json {
  return { spec: { template: { metadata: { annotations: { [RESTARTED_AT]: now.toISOString().replace(/\.\d{3}Z$/, 'Z') } } } } };
}

export const RESTARTED_AT = 'kubectl.kubernetes.io/restartedAt';
