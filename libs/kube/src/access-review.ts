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

/** A ServiceAccount, as the API server authenticates its tokens. */
export interface ServiceAccountRef {
  readonly namespace: string;
  readonly name: string;
}

/**
 * The required permissions an identity lacks, one access review each. Without `serviceAccount`,
 * the current identity's (SelfSubjectAccessReview, needs no permission itself): for a startup
 * check that names what RBAC is missing instead of failing later with a bare 403. With it, that
 * ServiceAccount's (SubjectAccessReview, needs `create subjectaccessreviews`): for `outrigger
 * check`. API failures are thrown.
 */
export async function missingPermissions(kc: KubeClient, required: readonly RequiredPermission[], serviceAccount?: ServiceAccountRef): Promise<RequiredPermission[]> {
  const subject = serviceAccount
    ? {
        user: `system:serviceaccount:${serviceAccount.namespace}:${serviceAccount.name}`,
        groups: ['system:serviceaccounts', `system:serviceaccounts:${serviceAccount.namespace}`, 'system:authenticated'],
      }
    : {};
  const kind = serviceAccount ? 'SubjectAccessReview' : 'SelfSubjectAccessReview';
  const allowed = await Promise.all(
    required.map(async ({ verb, group, resource, subresource, namespace, name }) => {
      const body = {
        apiVersion: 'authorization.k8s.io/v1',
        kind,
        spec: { ...subject, resourceAttributes: { verb, group, resource, subresource, namespace, name } },
      };
      const path = `/apis/authorization.k8s.io/v1/${kind.toLowerCase()}s`;
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
