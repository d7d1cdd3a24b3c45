import { baseLabels, INSTALL_NAMES, uninstallHookPermissions } from '@outrigger/install';
import type { RenderedObject } from '@outrigger/control-plane';
import { hookObjects, type SyncerDeployment } from './hook-objects.ts';

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

/** The hook's objects for the install namespace of the rendered rbac-syncer Deployment, in the order Helm creates them. */
export function uninstallHookObjects(syncer: SyncerDeployment): RenderedObject[] {
  const name = INSTALL_NAMES.uninstallHook;
  const namespace = syncer.metadata.namespace ?? INSTALL_NAMES.namespace;
  const hook = {
    name,
    annotations: HOOK_ANNOTATIONS,
    permissions: uninstallHookPermissions(namespace),
    container: { name: 'remove-bindings', command: ['node', 'remove-bindings.js'], env: [{ name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } }] },
  };
  return hookObjects(syncer, hook, (metadata, pod) => ({
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata,
    spec: { backoffLimit: 3, activeDeadlineSeconds: 240, template: { metadata: { labels: { ...baseLabels('rbac-syncer'), 'app.kubernetes.io/name': name } }, spec: pod } },
  }));
}
