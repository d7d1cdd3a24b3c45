import { findSyncedRbac, INSTALL_NAMES, readAuthorizedToGuardMs } from '@outrigger/install';
import { deleteObject, type KubeClient, kubeJson, type KubeObject, type ObjectRef, readObject, resourcePath } from '@outrigger/kube';

export interface RemovalOptions {
  /** The install namespace, where the rbac-syncer's Deployment runs. */
  readonly namespace: string;
  readonly log: (line: string) => void;
  readonly podsGoneTimeoutMs?: number;
  readonly pollMs?: number;
}

/**
 * What `helm uninstall` runs first (the chart's pre-delete hook): stops the rbac-syncer (scaled to
 * zero, its pods waited for, so nothing writes back), then deletes every role it wrote for agents,
 * waits as long as a request authorized before may take to reach the exec guard (whose parameters
 * the bindings are), and deletes the bindings: the ones `outrigger uninstall` removes. Helm deletes
 * the rest of the release, the guard included, after it.
 */
export async function removeSyncedRbac(kc: KubeClient, options: RemovalOptions): Promise<void> {
  const { namespace, log } = options;
  const syncer = await readObject<KubeObject & { spec: { selector: { matchLabels?: Record<string, string> } } }>(kc, { apiVersion: 'apps/v1', kind: 'Deployment', namespace, name: INSTALL_NAMES.rbacSyncer });
  if (syncer) {
    log(`scaling Deployment ${namespace}/${INSTALL_NAMES.rbacSyncer} to 0 replicas`);
    const scale = resourcePath({ apiVersion: 'apps/v1', resource: 'deployments', namespace, name: INSTALL_NAMES.rbacSyncer, subresource: 'scale' });
    await kubeJson(kc, { method: 'PATCH', path: scale, contentType: 'application/merge-patch+json', body: { spec: { replicas: 0 } } });
    const selector = Object.entries(syncer.spec.selector.matchLabels ?? {}).map(([k, v]) => `${k}=${v}`).join(',');
    if (!selector) throw new Error(`Deployment ${namespace}/${INSTALL_NAMES.rbacSyncer} has no matchLabels selector: cannot tell when its pods are gone`);
    await waitForPodsGone(kc, namespace, selector, options);
  } else {
    log(`no Deployment ${namespace}/${INSTALL_NAMES.rbacSyncer}: nothing to stop`);
  }
  const { roles, bindings } = await findSyncedRbac(kc);
  const delete_ = async (ref: ObjectRef) => {
    await deleteObject(kc, ref);
    log(`deleted ${ref.kind} ${ref.namespace ? `${ref.namespace}/` : ''}${ref.name}`);
  };
  for (const ref of roles) await delete_(ref);
  if (bindings.length > 0) {
    const waitMs = await readAuthorizedToGuardMs(kc);
    log(`waiting ${waitMs / 1000} s before deleting the bindings: the exec guard judges their ServiceAccounts until then`);
    await new Promise((resolve) => setTimeout(resolve, waitMs));
  }
  for (const ref of bindings) await delete_(ref);
  log(`removed ${roles.length + bindings.length} object(s) the rbac-syncer wrote`);
}

async function waitForPodsGone(kc: KubeClient, namespace: string, labelSelector: string, options: RemovalOptions): Promise<void> {
  const timeoutMs = options.podsGoneTimeoutMs ?? 120_000;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const pods = await kubeJson<{ items?: unknown[] }>(kc, { path: resourcePath({ apiVersion: 'v1', resource: 'pods', namespace }), query: { labelSelector } });
    const left = (pods.items ?? []).length;
    if (left === 0) return;
    if (Date.now() > deadline) throw new Error(`${left} rbac-syncer pod(s) (${labelSelector}) still in ${namespace} after ${timeoutMs / 1000} s; nothing was deleted`);
    options.log(`waiting for ${left} rbac-syncer pod(s) to stop`);
    await new Promise((resolve) => setTimeout(resolve, options.pollMs ?? 1_000));
  }
}
