import type { AgentProfile } from '@outrigger/admission';
import type { RequiredPermission } from '@outrigger/kube';

const RBAC = 'rbac.authorization.k8s.io';

/**
 * Everything the syncer does against the API server, as SelfSubjectAccessReview attributes. Kept
 * in step with deploy/base/rbac-syncer/rbac.yaml: list/watch pods and namespaces, manage its own
 * roles and bindings, `bind`/`escalate` on its profiles' ClusterRoles only, its Lease, Events,
 * and reading the exec guard when a profile binds cluster-wide.
 */
export function requiredPermissions(profiles: readonly AgentProfile[], lease: { namespace: string; name: string }, execGuardName: string): RequiredPermission[] {
  const list: RequiredPermission[] = [
    ...['list', 'watch'].flatMap((verb) => [
      { verb, group: '', resource: 'pods' },
      { verb, group: '', resource: 'namespaces' },
      { verb, group: RBAC, resource: 'clusterrolebindings' },
      { verb, group: RBAC, resource: 'clusterroles' },
    ]),
    { verb: 'create', group: RBAC, resource: 'clusterroles' },
    { verb: 'create', group: RBAC, resource: 'clusterrolebindings' },
    { verb: 'get', group: 'coordination.k8s.io', resource: 'leases', namespace: lease.namespace, name: lease.name },
    { verb: 'update', group: 'coordination.k8s.io', resource: 'leases', namespace: lease.namespace, name: lease.name },
    { verb: 'create', group: 'coordination.k8s.io', resource: 'leases', namespace: lease.namespace },
    { verb: 'create', group: '', resource: 'events', namespace: 'default' },
  ];
  if (profiles.some((p) => p.rbac?.binding.kind === 'ClusterRoleBinding')) {
    // Read-only, by name: the guard ships with the manifests; the syncer only checks it is in force.
    for (const resource of ['validatingadmissionpolicies', 'validatingadmissionpolicybindings']) {
      for (const verb of ['get', 'list', 'watch']) list.push({ verb, group: 'admissionregistration.k8s.io', resource, name: execGuardName });
    }
  }
  for (const profile of profiles) {
    const rbac = profile.rbac;
    if (!rbac) continue;
    for (const verb of ['get', 'patch', 'bind', 'escalate']) list.push({ verb, group: RBAC, resource: 'clusterroles', name: rbac.clusterRole });
    if (rbac.binding.kind === 'ClusterRoleBinding') {
      for (const verb of ['get', 'patch']) list.push({ verb, group: RBAC, resource: 'clusterrolebindings', name: rbac.binding.name });
    } else {
      for (const verb of ['list', 'watch', 'get', 'create', 'patch', 'delete']) list.push({ verb, group: RBAC, resource: 'rolebindings' });
    }
  }
  return list;
}
