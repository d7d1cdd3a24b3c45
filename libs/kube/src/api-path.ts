export interface ResourcePathParts {
  /** `v1` for the core group, else `group/version`, e.g. `rbac.authorization.k8s.io/v1`. */
  readonly apiVersion: string;
  /** Lower-case plural resource name, e.g. `pods`, `clusterrolebindings`. */
  readonly resource: string;
  /** Omit for cluster-scoped resources, or for a list/watch across all namespaces. */
  readonly namespace?: string;
  readonly name?: string;
  readonly subresource?: string;
}

/** The REST path of a resource collection or object, e.g. `/apis/apps/v1/namespaces/ns/deployments/web`. */
export function resourcePath(parts: ResourcePathParts): string {
  const segments = [parts.apiVersion.includes('/') ? `/apis/${parts.apiVersion}` : `/api/${parts.apiVersion}`];
  if (parts.namespace) segments.push('namespaces', encodeURIComponent(parts.namespace));
  segments.push(parts.resource);
  if (parts.name) segments.push(encodeURIComponent(parts.name));
  if (parts.subresource) {
    if (!parts.name) throw new Error('a subresource needs an object name');
    segments.push(parts.subresource);
  }
  return segments.join('/');
}
