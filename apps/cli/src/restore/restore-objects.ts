import { INSTALL_NAMES, INSTANCE_LABEL } from '@outrigger/install';
import { classifyApiError, discoverResource, type KubeClient, kubeJson, resourcePath } from '@outrigger/kube';
import YAML from 'yaml';
import { PART_OF_OUTRIGGER } from '../check/install-state.js';
import { describeInstall, helmRepair, type InstallIdentity, installIdentity, type ManifestInstall } from '../install-identity.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- manifests are untyped JSON

export interface RestoreOutcome {
  /** `Kind namespace/name`. */
  readonly object: string;
  readonly result: 'created' | 'exists' | 'replaced';
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
 * missing parts of an install come back as the files have them and nothing of an overlay is undone;
 * with `replace`, puts those that exist back as the files have them too (for objects no overlay
 * changes: the admission policies). Each object carries the install's instance label, as the rest
 * of the install does.
 * Namespaced objects of the install namespace (or of none) go into `namespace`, with the
 * ServiceAccount subjects of the install namespace; one the file puts elsewhere (the cert-manager's
 * Role for Events in `default`) stays there. Refuses a Helm install, whose release only Helm repairs.
 */
export async function restoreObjects(kc: KubeClient, objects: readonly Json[], namespace: string, { replace = false }: { readonly replace?: boolean } = {}): Promise<RestoreOutcome[]> {
  const install = await readInstallIdentity(kc, namespace);
  if (install.by === 'helm') {
    throw new Error(
      `Outrigger in ${namespace} is ${describeInstall(install)}: objects created here would lack Helm's ownership label and annotations, so helm uninstall would leave them behind and helm upgrade conflict on them; let Helm re-create what its release lacks: ${helmRepair(install)}`,
    );
  }
  // All checked before the first is created: a restore of another installation's manifests creates nothing.
  const labelled = objects.map((object) => withInstance(replace ? replaceable(object) : object, install, namespace));
  const outcomes: RestoreOutcome[] = [];
  for (const object of labelled) {
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
      if (!replace) {
        outcomes.push({ object: described, result: 'exists' });
        continue;
      }
      await replaceObject(kc, resourcePath({ apiVersion: object.apiVersion, resource, namespace: into, name: object.metadata.name }), body, described);
      outcomes.push({ object: described, result: 'replaced' });
    }
  }
  return outcomes;
}

/** What --replace may put back: objects no overlay changes, so replacing one undoes nothing of an install. */
export const REPLACEABLE_KINDS: ReadonlySet<string> = new Set(['ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding']);

function replaceable(object: Json): Json {
  if (REPLACEABLE_KINDS.has(object.kind)) return object;
  throw new Error(`${object.kind} ${object.metadata.name}: --replace puts back only admission policies and their bindings (${[...REPLACEABLE_KINDS].join(', ')}), which no overlay changes; restore it without --replace (it creates only what is missing), from your overlay if it changes it`);
}

/** A PUT of `body` at the version read just before, as `kubectl replace` does: a change made meanwhile is refused, not overwritten. */
async function replaceObject(kc: KubeClient, path: string, body: Json, described: string): Promise<void> {
  try {
    const existing = await kubeJson<Json>(kc, { path, timeoutMs: 15_000 });
    const versioned = { ...body, metadata: { ...body.metadata, resourceVersion: existing.metadata?.resourceVersion } };
    await kubeJson(kc, { method: 'PUT', path, query: { fieldManager: FIELD_MANAGER }, body: versioned, timeoutMs: 15_000 });
  } catch (error) {
    const { reason, message } = classifyApiError(error);
    throw new Error(`cannot replace ${described}: ${reason === 'Conflict' ? 'it changed while being replaced; run the command again' : message}`, { cause: error });
  }
}

async function readInstallIdentity(kc: KubeClient, namespace: string): Promise<InstallIdentity> {
  const path = resourcePath({ apiVersion: 'apps/v1', resource: 'deployments', namespace });
  const deployments = await kubeJson<{ items?: Json[] }>(kc, { path, query: { labelSelector: PART_OF_OUTRIGGER }, timeoutMs: 15_000 });
  return installIdentity(deployments.items ?? [], namespace);
}

/** The object with the install's instance label; one the manifests label as another installation's is refused. */
function withInstance(object: Json, install: ManifestInstall, namespace: string): Json {
  const own: unknown = object.metadata.labels?.[INSTANCE_LABEL];
  if (own !== undefined && own !== install.instance) {
    throw new Error(`${object.kind} ${object.metadata.name} is labelled ${INSTANCE_LABEL}=${String(own)}, but the install in ${namespace} has ${describeInstall(install)}: these manifests are another installation's`);
  }
  if (install.instance === undefined) return object;
  return { ...object, metadata: { ...object.metadata, labels: { ...object.metadata.labels, [INSTANCE_LABEL]: install.instance } } };
}

function inNamespace(object: Json, namespace: string, into: string | undefined): Json {
  const subjects = Array.isArray(object.subjects) ? { subjects: object.subjects.map((s: Json) => (s.kind === 'ServiceAccount' && followsInstall(s.namespace) ? { ...s, namespace } : s)) } : {};
  return { ...object, metadata: { ...object.metadata, ...(into ? { namespace: into } : {}) }, ...subjects };
}
