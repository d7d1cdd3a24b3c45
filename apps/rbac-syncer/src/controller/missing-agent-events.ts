import { controllerOf, type ControllerRef, describeApiError, type EventRecorder, type InvolvedObject, kubeJson, type KubeClient, type KubeObject, resourcePath } from '@outrigger/kube';
import type { MissingOwner } from '../desired/agent-counts.js';

/** How often one workload is told again while its pods still miss a profile's agent. */
export const MISSING_AGENT_REPEAT_MS = 10 * 60_000;
/** Workloads told per reconcile, so a cluster-wide outage does not turn into a burst of writes. */
const TOLD_PER_REPORT = 20;

export const AGENT_MISSING_REASON = 'AgentMissing';

/** The owners whose controller is the workload a user edits and restarts (a Deployment, a CronJob). */
const OWNED_BY_WORKLOAD: Readonly<Record<string, { apiVersion: string; resource: string }>> = {
  ReplicaSet: { apiVersion: 'apps/v1', resource: 'replicasets' },
  Job: { apiVersion: 'batch/v1', resource: 'jobs' },
};

/**
 * Tells a workload's owner that its pods opted into a profile but run without its agent: a
 * Warning Event on the workload (the Deployment rather than its ReplicaSet, the CronJob rather
 * than its Job), at most once per workload and profile every MISSING_AGENT_REPEAT_MS. Bare pods
 * have no workload to tell; `outrigger check` and the profile's status count them.
 */
export class MissingAgentEvents {
  /** `<profile> <owner uid>` → when it was told. */
  private readonly told = new Map<string, number>();

  constructor(
    private readonly kc: KubeClient,
    private readonly events: EventRecorder,
    private readonly log: { warn(message: string): void },
    private readonly repeatMs = MISSING_AGENT_REPEAT_MS,
  ) {}

  async report(profile: string, owners: readonly MissingOwner[]): Promise<void> {
    const now = Date.now();
    for (const [key, at] of this.told) if (now - at >= this.repeatMs) this.told.delete(key);
    const due = owners.filter((o) => o.owner && !this.told.has(`${profile} ${o.owner.uid}`)).slice(0, TOLD_PER_REPORT);
    for (const { namespace, owner, pods } of due) {
      if (!owner) continue;
      this.told.set(`${profile} ${owner.uid}`, now);
      const workload = await this.workloadOf(namespace, owner);
      await this.events.warning(
        workload,
        AGENT_MISSING_REASON,
        `${pods} pod(s) opted into AgentProfile ${profile} but run without its agent (created while the injector was not called); with the injector serving, restart them to get it: outrigger rollout restart --missing --profile ${profile} -n ${namespace}`,
      );
    }
  }

  /** The workload the owner belongs to; the owner itself when it has none or cannot be read. */
  private async workloadOf(namespace: string, owner: ControllerRef): Promise<InvolvedObject> {
    const own: InvolvedObject = { apiVersion: owner.apiVersion, kind: owner.kind, name: owner.name, namespace, uid: owner.uid };
    const type = OWNED_BY_WORKLOAD[owner.kind];
    if (!type || type.apiVersion !== owner.apiVersion) return own;
    try {
      const object = await kubeJson<KubeObject>(this.kc, { method: 'GET', path: resourcePath({ ...type, namespace, name: owner.name }), timeoutMs: 10_000 });
      const controller = controllerOf(object);
      return controller ? { ...controller, namespace } : own;
    } catch (error) {
      this.log.warn(`${owner.kind} ${namespace}/${owner.name}: cannot read its owner (${describeApiError(error)}); telling the ${owner.kind}`);
      return own;
    }
  }
}
