import { baseLabels, INSTALL_NAMES, rbacRules, uninstallHookPermissions } from '@outrigger/install';
import type { RenderedObject } from '@outrigger/control-plane';

/**
 * The chart's pre-delete hook, which Kustomize has no counterpart for: a Job running the
 * rbac-syncer's image (`node remove-bindings.js`) under a ServiceAccount of its own with exactly
 * libs/install's uninstallHookPermissions, so `helm uninstall` alone removes the bindings the syncer
 * wrote. Its pod is the syncer's (image, security contexts, resources) from the rendered overlay.
 */
export const HOOK_ANNOTATIONS = {
  'helm.sh/hook': 'pre-delete',
  // On success it all goes; a failed hook stays for `kubectl logs job/outrigger-uninstall` until the next attempt replaces it.
  'helm.sh/hook-delete-policy': 'before-hook-creation,hook-succeeded',
} as const;

const RBAC = 'rbac.authorization.k8s.io/v1';

interface PodTemplate {
  spec: { securityContext?: object; containers: { name: string; image: string; imagePullPolicy?: string; resources?: object; securityContext?: object }[] };
}

/** The hook's objects for the install namespace of the rendered rbac-syncer Deployment, in the order Helm creates them. */
export function uninstallHookObjects(syncer: RenderedObject & { spec?: { template?: PodTemplate } }): RenderedObject[] {
  const namespace = syncer.metadata.namespace ?? INSTALL_NAMES.namespace;
  const name = INSTALL_NAMES.uninstallHook;
  const pod = syncer.spec?.template?.spec;
  const container = pod?.containers[0];
  if (!pod || !container) throw new Error(`Deployment ${namespace}/${syncer.metadata.name} has no container`);
  const labels = { ...syncer.metadata.labels, ...baseLabels('rbac-syncer'), 'app.kubernetes.io/name': name };
  const metadata = (weight: number, inNamespace = true) => ({ name, ...(inNamespace ? { namespace } : {}), labels, annotations: { ...HOOK_ANNOTATIONS, 'helm.sh/hook-weight': String(weight) } });
  const permissions = uninstallHookPermissions(namespace);
  const subjects = [{ kind: 'ServiceAccount', name, namespace }];
  return [
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: metadata(-1) },
    { apiVersion: RBAC, kind: 'Role', metadata: metadata(-1), rules: rbacRules(permissions.filter((p) => p.namespace !== undefined)) },
    { apiVersion: RBAC, kind: 'RoleBinding', metadata: metadata(-1), roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name }, subjects },
    { apiVersion: RBAC, kind: 'ClusterRole', metadata: metadata(-1, false), rules: rbacRules(permissions.filter((p) => p.namespace === undefined)) },
    { apiVersion: RBAC, kind: 'ClusterRoleBinding', metadata: metadata(-1, false), roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name }, subjects },
    {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: metadata(0),
      spec: {
        backoffLimit: 3,
        activeDeadlineSeconds: 240,
        template: {
          metadata: { labels: { ...baseLabels('rbac-syncer'), 'app.kubernetes.io/name': name } },
          spec: {
            serviceAccountName: name,
            restartPolicy: 'Never',
            enableServiceLinks: false,
            ...(pod.securityContext ? { securityContext: pod.securityContext } : {}),
            containers: [
              {
                name: 'remove-bindings',
                image: container.image,
                ...(container.imagePullPolicy ? { imagePullPolicy: container.imagePullPolicy } : {}),
                command: ['node', 'remove-bindings.js'],
                env: [{ name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } }],
                ...(container.resources ? { resources: container.resources } : {}),
                ...(container.securityContext ? { securityContext: container.securityContext } : {}),
              },
            ],
          },
        },
      },
    },
  ] as unknown as RenderedObject[];
}
