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

/** Whether an object or subject in this namespace (none: the install's) follows the install into another one. */
const followsInstall = (objectNamespace: unknown) => !objectNamespace || objectNamespace === INSTALL_NAMES.namespace;

/**
 * Creates each object that does not exist and leaves every one that does exactly as it is, so the
 * missing parts of an install come back as the files have them and nothing of an overlay is undone.
 * Namespaced objects of the install namespace (or of none) go into `namespace`, with the
 * ServiceAccount subjects of the install namespace; one the file puts elsewhere (the cert-manager's
 * Role for Events in `default`) stays there.
 */
export async function restoreObjects(kc: KubeClient, objects: readonly Json[], namespace: string): Promise<RestoreOutcome[]> {
  const outcomes: RestoreOutcome[] = [];
  for (const object of objects) {
    const { resource, namespaced } = await discoverResource(kc, object.apiVersion, object.kind);
    const into = namespaced ? (followsInstall(object.metadata.namespace) ? namespace : (object.metadata.namespace as string)) : undefined;
    const body = inNamespace(object, namespace, into);
    const described = `${object.kind} ${into ? `${into}/` : ''}${object.metadata.name}`;
    try {
      const path = resourcePath({ apiVersion: object.apiVersion, resource, namespace: into });
      await kubeJson(kc, { method: 'POST', path, query: { fieldManager: FIELD_MANAGER }, body, timeoutMs: 15_000 });
      outcomes.push({ object: described, result: 'created' });
    } catch (error) {
      if (classifyApiError(error).reason !== 'AlreadyExists') throw new Error(`cannot create ${described}: ${classifyApiError(error).message}`);
      outcomes.push({ object: described, result: 'exists' });
    }
  }
  return outcomes;
}

function inNamespace(object: Json, namespace: string, into: string | undefined): Json {
  const subjects = Array.isArray(object.subjects) ? { subjects: object.subjects.map((s: Json) => (s.kind === 'ServiceAccount' && followsInstall(s.namespace) ? { ...s, namespace } : s)) } : {};
  return { ...object, metadata: { ...object.metadata, ...(into ? { namespace: into } : {}) }, ...subjects };
}
