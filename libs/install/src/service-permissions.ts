import { AGENT_PROFILE_GROUP, type AgentProfile } from '@outrigger/agent-profiles';
import type { RequiredPermission } from '@outrigger/kube';
import { execGuardName as guardName } from './exec-guard.js';

const RBAC = 'rbac.authorization.k8s.io';

/** A Lease a service holds to lead. */
export interface LeaseRef {
  readonly namespace: string;
  readonly name: string;
}

/**
 * What the injector does against the API server: read its serving Secret by name (with TLS_SECRET)
 * and, without PROFILES_FILE, list and watch AgentProfiles and namespaces (their Pod Security
 * label: it refuses an agent the namespace's level would). Granted by deploy/base/injector.
 */
export function injectorPermissions(options: { readonly servingSecret?: { readonly namespace: string; readonly name: string }; readonly profilesFromApi: boolean }): RequiredPermission[] {
  const secret = options.servingSecret;
  return [
    ...(secret ? ['get', 'list', 'watch'].map((verb) => ({ verb, group: '', resource: 'secrets', namespace: secret.namespace, name: secret.name })) : []),
    ...(options.profilesFromApi ? ['list', 'watch'].map((verb) => ({ verb, group: AGENT_PROFILE_GROUP, resource: 'agentprofiles' })) : []),
    ...(options.profilesFromApi ? ['list', 'watch'].map((verb) => ({ verb, group: '', resource: 'namespaces' })) : []),
  ];
}

/**
 * What the cert-manager does against the API server: create and keep its two Secrets, patch the
 * caBundle of the webhook configurations it names, lead by its Lease, and record Events about its
 * Secrets beside them and about the (cluster-scoped) webhook configurations in `default`. Granted
 * by deploy/base/cert-manager.
 */
export function certManagerPermissions(options: { readonly namespace: string; readonly secrets: readonly string[]; readonly webhooks: readonly string[]; readonly lease: LeaseRef }): RequiredPermission[] {
  const { namespace, lease } = options;
  return [
    { verb: 'create', group: '', resource: 'secrets', namespace },
    ...options.secrets.flatMap((name) => ['get', 'list', 'watch', 'update'].map((verb) => ({ verb, group: '', resource: 'secrets', namespace, name }))),
    ...options.webhooks.flatMap((name) => ['get', 'list', 'watch', 'patch'].map((verb) => ({ verb, group: 'admissionregistration.k8s.io', resource: 'mutatingwebhookconfigurations', name }))),
    ...leasePermissions(lease),
    { verb: 'create', group: '', resource: 'events', namespace },
    { verb: 'create', group: '', resource: 'events', namespace: 'default' },
  ];
}

function leasePermissions(lease: LeaseRef): RequiredPermission[] {
  return [
    { verb: 'get', group: 'coordination.k8s.io', resource: 'leases', namespace: lease.namespace, name: lease.name },
    { verb: 'update', group: 'coordination.k8s.io', resource: 'leases', namespace: lease.namespace, name: lease.name },
    { verb: 'create', group: 'coordination.k8s.io', resource: 'leases', namespace: lease.namespace },
  ];
}

/**
 * What the rbac-syncer does against the API server whatever the profiles. Granted by
 * deploy/base/rbac-syncer/rbac.yaml: list/watch pods and namespaces, its own roles and bindings,
 * its Lease, Events, and (without PROFILES_FILE) the AgentProfiles and their status.
 */
export function rbacSyncerBasePermissions(lease: LeaseRef, profilesFromApi: boolean): RequiredPermission[] {
  return [
    ...['list', 'watch'].flatMap((verb) => [
      { verb, group: '', resource: 'pods' },
      { verb, group: '', resource: 'namespaces' },
      { verb, group: RBAC, resource: 'clusterrolebindings' },
      { verb, group: RBAC, resource: 'clusterroles' },
      ...(profilesFromApi ? [{ verb, group: AGENT_PROFILE_GROUP, resource: 'agentprofiles' }] : []),
    ]),
    ...(profilesFromApi ? [{ verb: 'patch', group: AGENT_PROFILE_GROUP, resource: 'agentprofiles', subresource: 'status' }] : []),
    { verb: 'create', group: RBAC, resource: 'clusterroles' },
    { verb: 'create', group: RBAC, resource: 'clusterrolebindings' },
    ...leasePermissions(lease),
    // The agent revisions of every profile (the specs running pods were injected from), beside its Lease.
    ...['list', 'watch', 'create', 'patch', 'delete'].map((verb) => ({ verb, group: 'apps', resource: 'controllerrevisions', namespace: lease.namespace })),
    // Events on the bindings (in "default") and on workloads whose pods run without their agent,
    // found through the pod's ReplicaSet or Job (read one at a time, by name).
    { verb: 'create', group: '', resource: 'events' },
    { verb: 'get', group: 'apps', resource: 'replicasets' },
    { verb: 'get', group: 'batch', resource: 'jobs' },
  ];
}

/**
 * What one profile needs on top: `bind`/`escalate` on its own ClusterRole only (an admin grants
 * these per profile in the overlay they install from, so creating an AgentProfile alone never
 * widens what the syncer can grant), and writing its bindings: one per namespace, so by any name
 * (RBAC cannot limit by label; the syncer writes only objects its labels mark as its own), and
 * reading the exec guard of its kind of binding.
 */
export function rbacSyncerProfilePermissions(profile: AgentProfile, execGuardName: string): RequiredPermission[] {
  const rbac = profile.rbac;
  if (!rbac) return [];
  const list: RequiredPermission[] = ['patch', 'bind', 'escalate'].map((verb) => ({ verb, group: RBAC, resource: 'clusterroles', name: rbac.clusterRole }));
  if (rbac.binding.kind === 'ClusterRoleBinding') {
    for (const verb of ['patch', 'delete']) list.push({ verb, group: RBAC, resource: 'clusterrolebindings' });
  } else {
    for (const verb of ['list', 'watch', 'create', 'patch', 'delete']) list.push({ verb, group: RBAC, resource: 'rolebindings' });
  }
  // Read-only, by name: the guard of its kind ships with the manifests; the syncer only checks it is in force.
  for (const resource of ['validatingadmissionpolicies', 'validatingadmissionpolicybindings']) {
    for (const verb of ['get', 'list', 'watch']) list.push({ verb, group: 'admissionregistration.k8s.io', resource, name: guardName(rbac.binding.kind, execGuardName) });
  }
  return list;
}

/** The rbac-syncer's base and per-profile permissions together, each once. */
export function rbacSyncerPermissions(profiles: readonly AgentProfile[], lease: LeaseRef, execGuardName: string, profilesFromApi = false): RequiredPermission[] {
  const all = [...rbacSyncerBasePermissions(lease, profilesFromApi), ...profiles.flatMap((p) => rbacSyncerProfilePermissions(p, execGuardName))];
  const seen = new Set<string>();
  return all.filter((p) => {
    const key = JSON.stringify(p);
    return seen.has(key) ? false : (seen.add(key), true);
  });
}
