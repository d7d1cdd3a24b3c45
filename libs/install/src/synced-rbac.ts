import { MANAGED_BY_LABEL, MANAGED_BY_VALUE } from '@outrigger/agent-profiles';
import { type KubeClient, kubeJson, type ObjectRef, type RequiredPermission, resourcePath } from '@outrigger/kube';
import { INSTALL_NAMES } from './install-names.js';

const RBAC = 'rbac.authorization.k8s.io';

/**
 * What the rbac-syncer writes for agents, found by its label, in removal order: the roles first,
 * so RBAC stops granting while the bindings (the exec guard's parameters) still name whom the
 * guard judges; the bindings once a request authorized before can no longer be on its way.
 */
export const SYNCED_RBAC_TYPES = [
  { apiVersion: `${RBAC}/v1`, kind: 'ClusterRole', resource: 'clusterroles' },
  { apiVersion: `${RBAC}/v1`, kind: 'ClusterRoleBinding', resource: 'clusterrolebindings' },
  { apiVersion: `${RBAC}/v1`, kind: 'RoleBinding', resource: 'rolebindings' },
] as const;

export const SYNCED_RBAC_SELECTOR = `${MANAGED_BY_LABEL}=${MANAGED_BY_VALUE}`;

/** What the rbac-syncer wrote for agents: its ClusterRoles, and its bindings (the exec guard's parameters), removed in that order. */
export interface SyncedRbac {
  readonly roles: readonly ObjectRef[];
  readonly bindings: readonly ObjectRef[];
}

/** Every ClusterRole, ClusterRoleBinding and RoleBinding (in any namespace) the rbac-syncer wrote. */
export async function findSyncedRbac(kc: KubeClient): Promise<SyncedRbac> {
  const lists = await Promise.all(
    SYNCED_RBAC_TYPES.map(async ({ apiVersion, kind, resource }) => {
      const list = await kubeJson<{ items?: { metadata: { name: string; namespace?: string } }[] }>(kc, { path: resourcePath({ apiVersion, resource }), query: { labelSelector: SYNCED_RBAC_SELECTOR } });
      return (list.items ?? []).map(({ metadata }): ObjectRef => ({ apiVersion, kind, name: metadata.name, ...(metadata.namespace ? { namespace: metadata.namespace } : {}) }));
    }),
  );
  const found = lists.flat();
  return { roles: found.filter((ref) => ref.kind === 'ClusterRole'), bindings: found.filter((ref) => ref.kind !== 'ClusterRole') };
}

/** A mutating webhook as its configuration lists it: what decides whether it sees an exec and for how long. */
export interface MutatingWebhookShape {
  readonly timeoutSeconds?: number;
  readonly reinvocationPolicy?: string;
  readonly rules?: readonly { readonly operations?: readonly string[]; readonly apiGroups?: readonly string[]; readonly resources?: readonly string[] }[];
}

/** Margin for the API server's RBAC informer to see a role deleted. */
const INFORMER_MARGIN_MS = 5_000;
const EXEC_RESOURCES = new Set(['*', '*/*', 'pods/*', '*/exec', '*/attach', '*/portforward', 'pods/exec', 'pods/attach', 'pods/portforward']);

/**
 * How long a request can spend between its authorization and the exec guard (the mutating
 * webhooks run in between): each webhook that may see an exec, attach or port-forward for its
 * timeout, twice when it may be reinvoked, and a margin. Selectors and conditions are not
 * evaluated: a webhook that might see one counts.
 */
export function authorizedToGuardMs(webhooks: readonly MutatingWebhookShape[]): number {
  const seesExec = (w: MutatingWebhookShape) =>
    (w.rules ?? []).some(
      (r) => (r.operations ?? []).some((o) => o === 'CONNECT' || o === '*') && (r.apiGroups ?? []).some((g) => g === '' || g === '*') && (r.resources ?? []).some((x) => EXEC_RESOURCES.has(x)),
    );
  const webhookMs = webhooks.filter(seesExec).reduce((ms, w) => ms + (w.timeoutSeconds ?? 10) * 1000 * (w.reinvocationPolicy === 'IfNeeded' ? 2 : 1), 0);
  return webhookMs + INFORMER_MARGIN_MS;
}

/** authorizedToGuardMs for the cluster's mutating webhook configurations now. */
export async function readAuthorizedToGuardMs(kc: KubeClient): Promise<number> {
  const list = await kubeJson<{ items?: { webhooks?: MutatingWebhookShape[] }[] }>(kc, { path: resourcePath({ apiVersion: 'admissionregistration.k8s.io/v1', resource: 'mutatingwebhookconfigurations' }) });
  return authorizedToGuardMs((list.items ?? []).flatMap((c) => c.webhooks ?? []));
}

/**
 * What the Helm chart's pre-delete hook (`node remove-bindings.js` in the rbac-syncer's image) does:
 * scale the rbac-syncer to zero and wait for its pods to go, so nothing writes back, then list and
 * delete what the syncer wrote, waiting between roles and bindings as long as the mutating webhooks
 * it reads may hold a request. RBAC cannot limit the deletes by label; the syncer confinement
 * policy does, for this ServiceAccount as for the syncer's.
 */
export function uninstallHookPermissions(namespace: string): RequiredPermission[] {
  return [
    { verb: 'get', group: 'apps', resource: 'deployments', namespace, name: INSTALL_NAMES.rbacSyncer },
    { verb: 'patch', group: 'apps', resource: 'deployments', subresource: 'scale', namespace, name: INSTALL_NAMES.rbacSyncer },
    { verb: 'list', group: '', resource: 'pods', namespace },
    ...SYNCED_RBAC_TYPES.flatMap(({ resource }) => ['list', 'delete'].map((verb) => ({ verb, group: RBAC, resource }))),
    { verb: 'list', group: 'admissionregistration.k8s.io', resource: 'mutatingwebhookconfigurations' },
  ];
}
