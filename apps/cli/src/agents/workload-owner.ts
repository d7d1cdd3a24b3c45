import type { ControllerRef } from '@outrigger/kube';

/** What owner resolution reads of a controller reference. */
export type OwnerRef = Pick<ControllerRef, 'apiVersion' | 'kind' | 'name'>;

/**
 * The workload a pod belongs to, as a user names it: Deployment, StatefulSet, DaemonSet, Job,
 * CronJob, a ReplicaSet no Deployment owns, a bare Pod, or whatever else controls it (`known`
 * false: a kind outrigger does not restart, e.g. another operator's).
 */
export interface WorkloadRef {
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
  /** The apiVersion of its kind, for the kinds outrigger knows; the owner's own for the rest. */
  readonly apiVersion: string;
  readonly known: boolean;
}

export const RESTARTABLE_KINDS = ['Deployment', 'StatefulSet', 'DaemonSet'] as const;

const DIRECT: Readonly<Record<string, string>> = { 'apps/v1 StatefulSet': 'StatefulSet', 'apps/v1 DaemonSet': 'DaemonSet', 'batch/v1 CronJob': 'CronJob', 'apps/v1 Deployment': 'Deployment' };
/** Owners that are themselves owned by the workload a user edits: their own controller is looked up. */
const INTERMEDIATE: Readonly<Record<string, { readonly parent: string; readonly parentApiVersion: string }>> = {
  'apps/v1 ReplicaSet': { parent: 'Deployment', parentApiVersion: 'apps/v1' },
  'batch/v1 Job': { parent: 'CronJob', parentApiVersion: 'batch/v1' },
};

/** The one lookup owner resolution makes: the controller of a ReplicaSet or Job (undefined: none, or it is gone). */
export type ControllerLookup = (namespace: string, owner: OwnerRef) => Promise<OwnerRef | undefined>;

/**
 * A pod's workload: its controller, followed through a ReplicaSet to its Deployment and through a
 * Job to its CronJob. A ReplicaSet or Job without such a parent is the workload itself.
 */
export async function resolveWorkload(namespace: string, podName: string, controller: OwnerRef | undefined, lookup: ControllerLookup): Promise<WorkloadRef> {
  if (!controller) return { kind: 'Pod', namespace, name: podName, apiVersion: 'v1', known: true };
  const key = `${controller.apiVersion} ${controller.kind}`;
  const direct = DIRECT[key];
  if (direct) return { kind: direct, namespace, name: controller.name, apiVersion: controller.apiVersion, known: true };
  const intermediate = INTERMEDIATE[key];
  if (!intermediate) return { kind: controller.kind, namespace, name: controller.name, apiVersion: controller.apiVersion, known: false };
  const parent = await lookup(namespace, controller);
  if (!parent) return { kind: controller.kind, namespace, name: controller.name, apiVersion: controller.apiVersion, known: true };
  if (parent.kind === intermediate.parent && parent.apiVersion === intermediate.parentApiVersion) {
    return { kind: parent.kind, namespace, name: parent.name, apiVersion: parent.apiVersion, known: true };
  }
  return { kind: parent.kind, namespace, name: parent.name, apiVersion: parent.apiVersion, known: false };
}

/** `Kind/name`, as kubectl names a workload. */
export function workloadName(w: Pick<WorkloadRef, 'kind' | 'name'>): string {
  return `${w.kind}/${w.name}`;
}

/** `namespace/Kind/name`: one key per workload. */
export function workloadKey(w: Pick<WorkloadRef, 'kind' | 'name' | 'namespace'>): string {
  return `${w.namespace}/${w.kind}/${w.name}`;
}
