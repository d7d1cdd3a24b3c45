import { kubeJson, type KubeClient } from './kube-request.js';

/** One thing a component needs to be allowed to do. `group` is '' for the core API group. */
export interface RequiredPermission {
  readonly verb: string;
  readonly group: string;
  readonly resource: string;
  readonly subresource?: string;
  /** Omit for cluster-scoped resources or "in all namespaces". */
  readonly namespace?: string;
  readonly name?: string;
}

/**
 * The required permissions the current identity lacks, asked with one SelfSubjectAccessReview
 * each (needs no permission itself). For a startup check that names what RBAC is missing
 * instead of failing later with a bare 403. API failures are thrown.
 */
export async function missingPermissions(kc: KubeClient, required: readonly RequiredPermission[]): Promise<RequiredPermission[]> {
  const allowed = await Promise.all(
    required.map(async ({ verb, group, resource, subresource, namespace, name }) => {
      const body = {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SelfSubjectAccessReview',
        spec: { resourceAttributes: { verb, group, resource, subresource, namespace, name } },
      };
      const path = '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews';
      const review = await kubeJson<{ status?: { allowed?: boolean } }>(kc, { method: 'POST', path, body, timeoutMs: 30_000 });
      return review.status?.allowed === true;
    }),
  );
  return required.filter((_, i) => !allowed[i]);
}

/** `create clusterrolebindings.rbac.authorization.k8s.io`, `get pods/log in namespace x named y`. */
export function describePermission(p: RequiredPermission): string {
  const resource = `${p.resource}${p.group ? `.${p.group}` : ''}${p.subresource ? `/${p.subresource}` : ''}`;
  const where = p.namespace ? ` in namespace ${p.namespace}` : '';
  const which = p.name ? ` named ${p.name}` : '';
  return `${p.verb} ${resource}${where}${which}`;
}
