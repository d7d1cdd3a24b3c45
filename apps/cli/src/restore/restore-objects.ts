import { INSTALL_NAMES } from '@outrigger/install';
import { classifyApiError, discoverResource, type KubeClient, kubeJson, resourcePath } from '@outrigger/kube';
import YAML from 'yaml';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- manifests are untyped JSON

export interface RestoreOutcome {
  /** `Kind namespace/name`. */
  readonly object: string;
  readonly result: 'created' | 'exists';
}

const FIELD_MANAGER = 'outrigger-restore';

/** The objects of a YAML or JSON stream, Lists unwrapped, empty documents skipped. */
export function manifestObjects(text: string, source: string): Json[] {
  return YAML.parseAllDocuments(text).flatMap((document, i) => {
    if (document.errors.length > 0) throw new Error(`${source}: document ${i}: ${document.errors[0]?.message}`);
    const value = document.toJS() as Json | null;
    if (value === null || value === undefined) return [];
    if (typeof value.kind === 'string' && value.kind.endsWith('List') && Array.isArray(value.items)) return value.items as Json[];
    if (!value.apiVersion || !value.kind || !value.metadata?.name) throw new Error(`${source}: document ${i} is not a Kubernetes object (apiVersion, kind, metadata.name)`);
    return [value];
  });
}

/**
 * Creates each object that does not exist and leaves every one that does exactly as it is, so the
 * missing parts of an install come back as the files have them and nothing of an overlay is undone.
 * Namespaced objects go into `namespace`, with the ServiceAccount subjects of the install namespace
 * (as Kustomize's namespace setting moves them).
 */
export async function restoreObjects(kc: KubeClient, objects: readonly Json[], namespace: string): Promise<RestoreOutcome[]> {
  const outcomes: RestoreOutcome[] = [];
  for (const object of objects) {
    const { resource, namespaced } = await discoverResource(kc, object.apiVersion, object.kind);
    const body = inNamespace(object, namespace, namespaced);
    const described = `${object.kind} ${namespaced ? `${namespace}/` : ''}${object.metadata.name}`;
    try {
      const path = resourcePath({ apiVersion: object.apiVersion, resource, namespace: namespaced ? namespace : undefined });
      await kubeJson(kc, { method: 'POST', path, query: { fieldManager: FIELD_MANAGER }, body, timeoutMs: 15_000 });
      outcomes.push({ object: described, result: 'created' });
    } catch (error) {
      if (classifyApiError(error).reason !== 'AlreadyExists') throw new Error(`cannot create ${described}: ${classifyApiError(error).message}`);
      outcomes.push({ object: described, result: 'exists' });
    }
  }
  return outcomes;
}

function inNamespace(object: Json, namespace: string, namespaced: boolean): Json {
  const moved = (subject: Json) => subject.kind === 'ServiceAccount' && (!subject.namespace || subject.namespace === INSTALL_NAMES.namespace);
  const subjects = Array.isArray(object.subjects) ? { subjects: object.subjects.map((s: Json) => (moved(s) ? { ...s, namespace } : s)) } : {};
  return { ...object, metadata: { ...object.metadata, ...(namespaced ? { namespace } : {}) }, ...subjects };
}
