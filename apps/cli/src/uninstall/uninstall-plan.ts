import type { ObjectRef } from '@outrigger/kube';

/** One step of `outrigger uninstall`, in order: deletes, a wait for the services' pods to be gone, or a pause. */
export type UninstallStep =
  | { readonly kind: 'delete'; readonly why: string; readonly objects: readonly ObjectRef[] }
  | { readonly kind: 'wait-for-pods-gone'; readonly why: string; readonly namespace: string; readonly labelSelector: string }
  | { readonly kind: 'pause'; readonly why: string; readonly ms: number };

/** What Outrigger put in the cluster, as found by label (and the CRD by name). */
export interface InstalledObjects {
  readonly namespace: string;
  readonly podSelector: string;
  readonly webhookConfigurations: readonly ObjectRef[];
  readonly deployments: readonly ObjectRef[];
  /** ClusterRoles the rbac-syncer wrote (its managed-by label). */
  readonly syncedRoles: readonly ObjectRef[];
  /** ClusterRoleBindings and RoleBindings the rbac-syncer wrote: the exec guard's parameters. */
  readonly syncedBindings: readonly ObjectRef[];
  /** How long a request authorized before the roles went can take to reach the exec guard (libs/install authorizedToGuardMs). */
  readonly authorizedToGuardMs: number;
  readonly admissionPolicies: readonly ObjectRef[];
  readonly crd: ObjectRef | undefined;
  /** The services' own objects from deploy/ outside the install namespace: their cluster-wide RBAC, PriorityClass, and grants in other namespaces. */
  readonly ownClusterObjects: readonly ObjectRef[];
  readonly installNamespace: ObjectRef | undefined;
}

/**
 * The order that keeps the cluster working at every step: the webhook configuration first (pod
 * creation never waits on a webhook that is going away), then the services (so the rbac-syncer
 * cannot write back what follows), then the agents' roles (RBAC stops granting), a pause while a
 * request authorized before may still reach the exec guard, the agents' bindings (the guard's
 * parameters), then the guard, then the CRD (its AgentProfiles with it), the services' RBAC and
 * PriorityClass, and the namespace.
 */
export function uninstallPlan(found: InstalledObjects): UninstallStep[] {
  const steps: UninstallStep[] = [
    { kind: 'delete', why: 'the webhook configuration, so pod creation never depends on a webhook being removed', objects: found.webhookConfigurations },
    { kind: 'delete', why: 'the services', objects: found.deployments },
    { kind: 'wait-for-pods-gone', why: 'the rbac-syncer must be stopped before its bindings go', namespace: found.namespace, labelSelector: found.podSelector },
    { kind: 'delete', why: "the agents' ClusterRoles the rbac-syncer wrote, so RBAC grants them nothing", objects: found.syncedRoles },
    { kind: 'pause', why: `${found.authorizedToGuardMs / 1000} s, while a request authorized before may still reach the exec guard, which judges the bindings' ServiceAccounts`, ms: found.authorizedToGuardMs },
    { kind: 'delete', why: "the agents' ClusterRoleBindings and RoleBindings the rbac-syncer wrote", objects: found.syncedBindings },
    { kind: 'delete', why: 'the exec guard and the other admission policies', objects: found.admissionPolicies },
    { kind: 'delete', why: 'the AgentProfile CRD and every AgentProfile', objects: found.crd ? [found.crd] : [] },
    { kind: 'delete', why: "the services' own ClusterRoles, bindings and PriorityClass, and their grants in other namespaces", objects: found.ownClusterObjects },
    { kind: 'delete', why: 'the install namespace (Secrets, Leases, Services, ServiceAccounts)', objects: found.installNamespace ? [found.installNamespace] : [] },
  ];
  return steps.filter((s) => (s.kind === 'delete' ? s.objects.length > 0 : s.kind === 'pause' ? found.syncedBindings.length > 0 : found.deployments.length > 0));
}

export function describeRef(ref: ObjectRef): string {
  return `${ref.kind} ${ref.namespace ? `${ref.namespace}/` : ''}${ref.name}`;
}
