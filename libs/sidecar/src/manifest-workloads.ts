import { isJsonObject, type JsonObject, type JsonValue } from '@outrigger/admission';

/** Where each workload kind keeps its pod template (empty path: the document is the pod). */
const TEMPLATE_PATHS: Readonly<Record<string, { readonly group: string; readonly path: readonly string[] }>> = {
  Pod: { group: '', path: [] },
  ReplicationController: { group: '', path: ['spec', 'template'] },
  Deployment: { group: 'apps', path: ['spec', 'template'] },
  StatefulSet: { group: 'apps', path: ['spec', 'template'] },
  DaemonSet: { group: 'apps', path: ['spec', 'template'] },
  ReplicaSet: { group: 'apps', path: ['spec', 'template'] },
  Job: { group: 'batch', path: ['spec', 'template'] },
  CronJob: { group: 'batch', path: ['spec', 'jobTemplate', 'spec', 'template'] },
};

/** The path to the pod template of a supported workload, or undefined for any other object. */
export function podTemplatePath(document: JsonObject): readonly string[] | undefined {
  const kind = document['kind'];
  const apiVersion = document['apiVersion'];
  if (typeof kind !== 'string' || typeof apiVersion !== 'string') return undefined;
  if (!Object.prototype.hasOwnProperty.call(TEMPLATE_PATHS, kind)) return undefined;
  const entry = TEMPLATE_PATHS[kind];
  const group = apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '';
  return entry && entry.group === group ? entry.path : undefined;
}

/**
 * Whether an object that podTemplatePath does not support still carries a pod template where
 * workloads keep one (`spec.template`, `spec.jobTemplate.spec.template`, a PodTemplate's `template`):
 * an Argo Rollout, an OpenKruise CloneSet, `extensions/v1beta1` Deployments. Its pods would get the
 * agent from the webhook only if the pods it creates are opted in; offline injection leaves it alone.
 */
export function carriesPodTemplate(document: JsonObject): boolean {
  const hasContainers = (path: readonly string[]) => Array.isArray(valueAtPath(document, [...path, 'spec', 'containers']));
  return [['spec', 'template'], ['spec', 'jobTemplate', 'spec', 'template'], ['template']].some(hasContainers);
}

/** `List` (kubectl get -o yaml) and every `<Kind>List`: a document whose items are objects. */
export function isList(document: JsonObject): boolean {
  const kind = document['kind'];
  return typeof kind === 'string' && kind.endsWith('List') && Array.isArray(document['items']);
}

export function valueAtPath(document: JsonValue, path: readonly string[]): JsonValue | undefined {
  let current: JsonValue | undefined = document;
  for (const key of path) {
    if (!isJsonObject(current) || !Object.prototype.hasOwnProperty.call(current, key)) return undefined;
    current = current[key];
  }
  return current;
}
