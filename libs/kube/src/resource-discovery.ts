import { resourcePath } from './api-path.js';
import { kubeJson, type KubeClient } from './kube-request.js';

export interface ResourceInfo {
  /** Plural resource name, e.g. `clusterrolebindings`. */
  readonly resource: string;
  readonly namespaced: boolean;
}

interface ApiResourceList {
  readonly resources?: ReadonlyArray<{ readonly name: string; readonly kind: string; readonly namespaced: boolean }>;
}

// Discovery answers per client and group/version; they change only when CRDs or aggregated APIs do.
const cache = new WeakMap<KubeClient, Map<string, Promise<ApiResourceList>>>();

/** Which resource serves `kind` in `apiVersion`, found through API discovery (cached per KubeClient). */
export async function discoverResource(kc: KubeClient, apiVersion: string, kind: string): Promise<ResourceInfo> {
  let perConfig = cache.get(kc);
  if (!perConfig) cache.set(kc, (perConfig = new Map()));
  let list = perConfig.get(apiVersion);
  if (!list) {
    const path = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
    list = kubeJson<ApiResourceList>(kc, { path, timeoutMs: 30_000 });
    perConfig.set(apiVersion, list);
    list.catch(() => perConfig.delete(apiVersion)); // never cache a failure
  }
  const found = (await list).resources?.find((r) => r.kind === kind && !r.name.includes('/'));
  if (!found) {
    perConfig.delete(apiVersion); // maybe a CRD installed since; look again next time
    throw new Error(`the apiserver serves no kind ${kind} in ${apiVersion}`);
  }
  return { resource: found.name, namespaced: found.namespaced };
}

/** A reference to one object by type and name. */
export interface ObjectRef {
  readonly apiVersion: string;
  readonly kind: string;
  readonly name: string;
  readonly namespace?: string;
}

/** The REST path of the object `ref` names, checking that namespaced kinds have a namespace. */
export async function objectPath(kc: KubeClient, ref: ObjectRef): Promise<string> {
  const { resource, namespaced } = await discoverResource(kc, ref.apiVersion, ref.kind);
  if (namespaced && !ref.namespace) throw new Error(`${ref.kind} ${ref.name} is namespaced but has no namespace`);
  return resourcePath({ apiVersion: ref.apiVersion, resource, namespace: namespaced ? ref.namespace : undefined, name: ref.name });
}
