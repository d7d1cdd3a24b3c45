import { AGENT_PROFILE_API_VERSION, type AgentProfile } from '@outrigger/agent-profiles';
import type { RequiredPermission } from '@outrigger/kube';

const RBAC = 'rbac.authorization.k8s.io';
const PROFILES_GROUP = AGENT_PROFILE_API_VERSION.split('/')[0] ?? '';

/**
 * What the syncer does against the API server whatever the profiles, as SelfSubjectAccessReview
 * attributes. Kept in step with deploy/base/rbac-syncer/rbac.yaml: list/watch pods and namespaces,
 * its own roles and bindings, its Lease, Events, and (without PROFILES_FILE) the AgentProfiles
 * and their status.
 */
export function basePermissions(lease: { namespace: string; name: string }, profilesFromApi: boolean): RequiredPermission[] {
  return [
    ...['list', 'watch'].flatMap((verb) => [
      { verb, group: '', resource: 'pods' },
      { verb, group: '', resource: 'namespaces' },
      { verb, group: RBAC, resource: 'clusterrolebindings' },
      { verb, group: RBAC, resource: 'clusterroles' },
      ...(profilesFromApi ? [{ verb, group: PROFILES_GROUP, resource: 'agentprofiles' }] : []),
    ]),
    ...(profilesFromApi ? [{ verb: 'patch', group: PROFILES_GROUP, resource: 'agentprofiles', subresource: 'status' }] : []),
    { verb: 'create', group: RBAC, resource: 'clusterroles' },
    { verb: 'create', group: RBAC, resource: 'clusterrolebindings' },
    { verb: 'get', group: 'coordination.k8s.io', resource: 'leases', namespace: lease.namespace, name: lease.name },
    { verb: 'update', group: 'coordination.k8s.io', resource: 'leases', namespace: lease.namespace, name: lease.name },
    { verb: 'create', group: 'coordination.k8s.io', resource: 'leases', namespace: lease.namespace },
    { verb: 'create', group: '', resource: 'events', namespace: 'default' },
  ];
}

/**
 * What one profile needs on top: `bind`/`escalate` on its own ClusterRole only, its binding by
 * name, and reading the exec guard when it binds cluster-wide. An admin grants these per profile
 * (deploy/base/rbac-syncer/rbac.yaml), so creating an AgentProfile alone never widens what the
 * syncer can grant.
 */
export function profilePermissions(profile: AgentProfile, execGuardName: string): RequiredPermission[] {
  const rbac = profile.rbac;
  if (!rbac) return [];
  const list: RequiredPermission[] = ['get', 'patch', 'bind', 'escalate'].map((verb) => ({ verb, group: RBAC, resource: 'clusterroles', name: rbac.clusterRole }));
  if (rbac.binding.kind === 'ClusterRoleBinding') {
    for (const verb of ['get', 'patch']) list.push({ verb, group: RBAC, resource: 'clusterrolebindings', name: rbac.binding.name });
    // Read-only, by name: the guard ships with the manifests; the syncer only checks it is in force.
    for (const resource of ['validatingadmissionpolicies', 'validatingadmissionpolicybindings']) {
      for (const verb of ['get', 'list', 'watch']) list.push({ verb, group: 'admissionregistration.k8s.io', resource, name: execGuardName });
    }
  } else {
    for (const verb of ['list', 'watch', 'get', 'create', 'patch', 'delete']) list.push({ verb, group: RBAC, resource: 'rolebindings' });
  }
  return list;
}

/** Base and per-profile permissions together, each once. */
export function requiredPermissions(profiles: readonly AgentProfile[], lease: { namespace: string; name: string }, execGuardName: string, profilesFromApi = false): RequiredPermission[] {
  const all = [...basePermissions(lease, profilesFromApi), ...profiles.flatMap((p) => profilePermissions(p, execGuardName))];
  const seen = new Set<string>();
  return all.filter((p) => {
    const key = JSON.stringify(p);
    return seen.has(key) ? false : (seen.add(key), true);
  });
}
