import { MANAGED_BY_LABEL, MANAGED_BY_VALUE } from '@outrigger/agent-profiles';
import { type KubeClient, kubeJson, type ObjectRef, type RequiredPermission, resourcePath } from '@outrigger/kube';
import { INSTALL_NAMES } from './install-names.js';

const RBAC = 'rbac.authorization.k8s.io';

/**
 * What the rbac-syncer writes for agents, bindings before the roles they grant: removed in this
 * order by `outrigger uninstall` and by the Helm chart's pre-delete hook, found by its label.
 */
export const SYNCED_RBAC_TYPES = [
  { apiVersion: `${RBAC}/v1`, kind: 'ClusterRoleBinding', resource: 'clusterrolebindings' },
  { apiVersion: `${RBAC}/v1`, kind: 'RoleBinding', resource: 'rolebindings' },
  { apiVersion: `${RBAC}/v1`, kind: 'ClusterRole', resource: 'clusterroles' },
] as const;

export const SYNCED_RBAC_SELECTOR = `${MANAGED_BY_LABEL}=${MANAGED_BY_VALUE}`;

/** Every ClusterRoleBinding, RoleBinding (in any namespace) and ClusterRole the rbac-syncer wrote, in removal order. */
export async function findSyncedRbac(kc: KubeClient): Promise<ObjectRef[]> {
  const lists = await Promise.all(
    SYNCED_RBAC_TYPES.map(async ({ apiVersion, kind, resource }) => {
      const list = await kubeJson<{ items?: { metadata: { name: string; namespace?: string } }[] }>(kc, { path: resourcePath({ apiVersion, resource }), query: { labelSelector: SYNCED_RBAC_SELECTOR } });
      return (list.items ?? []).map(({ metadata }): ObjectRef => ({ apiVersion, kind, name: metadata.name, ...(metadata.namespace ? { namespace: metadata.namespace } : {}) }));
    }),
  );
  return lists.flat();
}

/**
 * What the Helm chart's pre-delete hook (`node remove-bindings.js` in the rbac-syncer's image) does:
 * scale the rbac-syncer to zero and wait for its pods to go, so nothing writes back, then list and
 * delete what the syncer wrote. RBAC cannot limit the deletes by label; the syncer confinement
 * policy does, for this ServiceAccount as for the syncer's.
 */
export function uninstallHookPermissions(namespace: string): RequiredPermission[] {
  return [
    { verb: 'get', group: 'apps', resource: 'deployments', namespace, name: INSTALL_NAMES.rbacSyncer },
    { verb: 'patch', group: 'apps', resource: 'deployments', subresource: 'scale', namespace, name: INSTALL_NAMES.rbacSyncer },
    { verb: 'list', group: '', resource: 'pods', namespace },
    ...SYNCED_RBAC_TYPES.flatMap(({ resource }) => ['list', 'delete'].map((verb) => ({ verb, group: RBAC, resource }))),
  ];
}
