/**
 * Whether a workload's rollout has finished, by the conditions `kubectl rollout status` uses:
 * `done`, still `rolling` (with what it waits for), or `failed` (a Deployment past its progress
 * deadline; a kind or strategy with no rollout to wait for).
 */
export type RolloutStatus = { readonly state: 'done' | 'rolling' | 'failed'; readonly message: string };

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- API objects read field by field below

export function rolloutStatus(kind: string, obj: Json): RolloutStatus {
  switch (kind) {
    case 'Deployment':
      return deploymentStatus(obj);
    case 'DaemonSet':
      return daemonSetStatus(obj);
    case 'StatefulSet':
      return statefulSetStatus(obj);
    default:
      return { state: 'failed', message: `${kind} has no rollout to wait for` };
  }
}

const num = (value: unknown): number => (typeof value === 'number' ? value : 0);

function deploymentStatus(d: Json): RolloutStatus {
  const status = d.status ?? {};
  if (num(d.metadata?.generation) > num(status.observedGeneration)) return rolling('waiting for the Deployment controller to observe the change');
  const progressing = (Array.isArray(status.conditions) ? status.conditions : []).find((c: Json) => c.type === 'Progressing');
  if (progressing?.reason === 'ProgressDeadlineExceeded') return { state: 'failed', message: `exceeded its progress deadline: ${String(progressing.message ?? '')}` };
  const replicas = typeof d.spec?.replicas === 'number' ? d.spec.replicas : undefined;
  const updated = num(status.updatedReplicas);
  if (replicas !== undefined && updated < replicas) return rolling(`${updated} of ${replicas} new replicas updated`);
  if (num(status.replicas) > updated) return rolling(`${num(status.replicas) - updated} old replicas pending termination`);
  if (num(status.availableReplicas) < updated) return rolling(`${num(status.availableReplicas)} of ${updated} updated replicas available`);
  return { state: 'done', message: `${updated} replicas updated and available` };
}

function daemonSetStatus(ds: Json): RolloutStatus {
  if (ds.spec?.updateStrategy?.type !== 'RollingUpdate') return { state: 'failed', message: `updateStrategy ${String(ds.spec?.updateStrategy?.type)}: no rolling update to wait for` };
  const status = ds.status ?? {};
  if (num(ds.metadata?.generation) > num(status.observedGeneration)) return rolling('waiting for the DaemonSet controller to observe the change');
  const desired = num(status.desiredNumberScheduled);
  if (num(status.updatedNumberScheduled) < desired) return rolling(`${num(status.updatedNumberScheduled)} of ${desired} new pods updated`);
  if (num(status.numberAvailable) < desired) return rolling(`${num(status.numberAvailable)} of ${desired} updated pods available`);
  return { state: 'done', message: `${desired} pods updated and available` };
}

function statefulSetStatus(sts: Json): RolloutStatus {
  const strategy = sts.spec?.updateStrategy ?? {};
  if (strategy.type !== 'RollingUpdate') return { state: 'failed', message: `updateStrategy ${String(strategy.type)}: no rolling update to wait for` };
  const status = sts.status ?? {};
  const observed = num(status.observedGeneration);
  if (observed === 0 || num(sts.metadata?.generation) > observed) return rolling('waiting for the StatefulSet controller to observe the change');
  const replicas = typeof sts.spec?.replicas === 'number' ? sts.spec.replicas : undefined;
  if (replicas !== undefined && num(status.readyReplicas) < replicas) return rolling(`${replicas - num(status.readyReplicas)} pods not ready`);
  if (strategy.rollingUpdate) {
    const partition = typeof strategy.rollingUpdate.partition === 'number' ? strategy.rollingUpdate.partition : undefined;
    if (replicas !== undefined && partition !== undefined && num(status.updatedReplicas) < replicas - partition) {
      return rolling(`${num(status.updatedReplicas)} of ${replicas - partition} new pods updated`);
    }
    return { state: 'done', message: `${num(status.updatedReplicas)} new pods updated` };
  }
  if (status.updateRevision !== status.currentRevision) return rolling(`${num(status.updatedReplicas)} pods at revision ${String(status.updateRevision)}`);
  return { state: 'done', message: `${num(status.currentReplicas)} pods at revision ${String(status.currentRevision)}` };
}

function rolling(message: string): RolloutStatus {
  return { state: 'rolling', message };
}
