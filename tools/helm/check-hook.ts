import { checkPermissions, INSTALL_NAMES } from '@outrigger/install';
import type { RenderedObject } from '@outrigger/control-plane';
import { hookObjects, type SyncerDeployment } from './hook-objects.ts';

/**
 * The chart's test: `helm test <release>` runs `outrigger check` in a Pod in the release's namespace
 * (where `helm test --logs` reads test Pods), from the CLI every service image carries, under a
 * ServiceAccount of its own beside it with exactly libs/install's
 * checkPermissions (reads, and SubjectAccessReviews). Helm creates its objects only for the test and
 * removes them when it passes; when it fails, Helm removes the access and keeps the Pod for its logs
 * until the next run replaces it.
 */
export const TEST_HOOK_ANNOTATIONS = {
  'helm.sh/hook': 'test',
  'helm.sh/hook-delete-policy': 'before-hook-creation,hook-succeeded',
} as const;

/** Where the Dockerfile puts the CLI's build in every service image. */
export const IMAGE_CLI_MAIN = '/app/apps/cli/dist/main.js';

/** The test's objects for the install namespace of the rendered rbac-syncer Deployment and the release's namespace, in the order Helm creates them. */
export function checkHookObjects(syncer: SyncerDeployment, releaseNamespace: string): RenderedObject[] {
  const namespace = syncer.metadata.namespace ?? INSTALL_NAMES.namespace;
  const hook = { name: INSTALL_NAMES.checkHook, annotations: TEST_HOOK_ANNOTATIONS, permissions: checkPermissions(namespace), container: { name: 'check', command: ['node', IMAGE_CLI_MAIN, 'check'] } };
  return hookObjects(syncer, hook, (metadata, pod) => ({ apiVersion: 'v1', kind: 'Pod', metadata, spec: pod }), releaseNamespace);
}
