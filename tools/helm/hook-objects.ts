import { baseLabels, INSTALL_NAMES, rbacRules } from '@outrigger/install';
import type { RequiredPermission } from '@outrigger/kube';
import type { RenderedObject } from '@outrigger/control-plane';

const RBAC = 'rbac.authorization.k8s.io/v1';

/** The pod template of the rendered rbac-syncer Deployment, whose image and security contexts the hooks run with. */
export interface SyncerDeployment extends RenderedObject {
  spec?: { template?: { spec: { securityContext?: object; containers: { name: string; image: string; imagePullPolicy?: string; resources?: object; securityContext?: object }[] } } };
}

/** A chart hook: its name, annotations and the command it runs in the rbac-syncer's image. */
export interface Hook {
  readonly name: string;
  readonly annotations: Readonly<Record<string, string>>;
  readonly permissions: readonly RequiredPermission[];
  readonly container: { readonly name: string; readonly command: readonly string[]; readonly env?: readonly object[] };
}

/**
 * A hook's objects for the install namespace of the rendered rbac-syncer Deployment, in the order
 * Helm creates them: its ServiceAccount with exactly its permissions (a Role for those in the install
 * namespace, a ClusterRole for the rest) first, then `workload` (a Job or Pod, given its pod spec)
 * running its container in the syncer's image, with the syncer's security contexts and resources.
 * The ServiceAccount and the workload run in `runIn`, by default the install namespace.
 */
export function hookObjects(syncer: SyncerDeployment, hook: Hook, workload: (metadata: object, pod: object) => object, runIn?: string): RenderedObject[] {
  const namespace = syncer.metadata.namespace ?? INSTALL_NAMES.namespace;
  const runs = runIn ?? namespace;
  const pod = syncer.spec?.template?.spec;
  const container = pod?.containers[0];
  if (!pod || !container) throw new Error(`Deployment ${namespace}/${syncer.metadata.name} has no container`);
  const { name } = hook;
  const labels = { ...syncer.metadata.labels, ...baseLabels('rbac-syncer'), 'app.kubernetes.io/name': name };
  const metadata = (weight: number, inNamespace: string | undefined) => ({ name, ...(inNamespace ? { namespace: inNamespace } : {}), labels, annotations: { ...hook.annotations, 'helm.sh/hook-weight': String(weight) } });
  const subjects = [{ kind: 'ServiceAccount', name, namespace: runs }];
  const podSpec = {
    serviceAccountName: name,
    restartPolicy: 'Never',
    enableServiceLinks: false,
    ...(pod.securityContext ? { securityContext: pod.securityContext } : {}),
    containers: [
      {
        name: hook.container.name,
        image: container.image,
        ...(container.imagePullPolicy ? { imagePullPolicy: container.imagePullPolicy } : {}),
        command: [...hook.container.command],
        ...(hook.container.env ? { env: [...hook.container.env] } : {}),
        ...(container.resources ? { resources: container.resources } : {}),
        ...(container.securityContext ? { securityContext: container.securityContext } : {}),
      },
    ],
  };
  return [
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: metadata(-1, runs) },
    { apiVersion: RBAC, kind: 'Role', metadata: metadata(-1, namespace), rules: rbacRules(hook.permissions.filter((p) => p.namespace !== undefined)) },
    { apiVersion: RBAC, kind: 'RoleBinding', metadata: metadata(-1, namespace), roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name }, subjects },
    { apiVersion: RBAC, kind: 'ClusterRole', metadata: metadata(-1, undefined), rules: rbacRules(hook.permissions.filter((p) => p.namespace === undefined)) },
    { apiVersion: RBAC, kind: 'ClusterRoleBinding', metadata: metadata(-1, undefined), roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name }, subjects },
    workload(metadata(0, runs), podSpec),
  ] as unknown as RenderedObject[];
}
