import type { JsonObject, JsonValue } from '@outrigger/admission';

/**
 * Test-only: what kube-apiserver does to a pod on create around the webhook, written apart from
 * the library's own model. Quantities are canonicalised from a table of pairs the API server was
 * seen to store, so profiles in property tests draw their quantities from it.
 */
export const STORED_QUANTITIES: readonly (readonly [string | number, string])[] = [
  ['0.5', '500m'],
  ['1024Mi', '1Gi'],
  ['1000', '1k'],
  ['1.5Gi', '1536Mi'],
  ['100m', '100m'],
  ['0.25', '250m'],
  ['2048Ki', '2Mi'],
  ['1e3', '1e3'],
  ['32Mi', '32Mi'],
  [0.5, '500m'],
  [2, '2'],
];

const TOKEN_PATH = '/var/run/secrets/kubernetes.io/serviceaccount';
export const TOKEN_VOLUME = 'kube-api-access-q7x2m';

/** The ServiceAccount admission plugin, unless the pod turns it off: the token volume, and a mount in every container that has none at the path. */
export function serviceAccountPlugin(pod: JsonObject): JsonObject {
  const copy = structuredClone(pod);
  const spec = copy['spec'] as { automountServiceAccountToken?: boolean; volumes?: JsonObject[]; containers?: JsonObject[]; initContainers?: JsonObject[] };
  if (spec.automountServiceAccountToken === false) return copy;
  const volumes = spec.volumes ?? [];
  if (!volumes.some((v) => String(v['name']).startsWith('kube-api-access-'))) volumes.push({ name: TOKEN_VOLUME, projected: { sources: [] } });
  spec.volumes = volumes;
  const volume = String(volumes.find((v) => String(v['name']).startsWith('kube-api-access-'))?.['name']);
  for (const container of [...(spec.initContainers ?? []), ...(spec.containers ?? [])]) {
    const mounts = (container['volumeMounts'] as JsonObject[] | undefined) ?? [];
    if (!mounts.some((m) => m['mountPath'] === TOKEN_PATH)) container['volumeMounts'] = [...mounts, { name: volume, readOnly: true, mountPath: TOKEN_PATH }];
  }
  return copy;
}

/** The defaults kube-apiserver gives every container, and quantities as it stores them. */
export function apiServerDefaults(pod: JsonObject): JsonObject {
  const copy = structuredClone(pod);
  const spec = copy['spec'] as { hostNetwork?: boolean; containers?: JsonObject[]; initContainers?: JsonObject[] };
  for (const container of [...(spec.initContainers ?? []), ...(spec.containers ?? [])]) {
    const image = String(container['image']);
    const [name = '', digest] = image.split('@');
    const [, tag] = name.slice(name.lastIndexOf('/') + 1).split(':');
    container['imagePullPolicy'] ??= tag === 'latest' || (tag === undefined && digest === undefined) ? 'Always' : 'IfNotPresent';
    container['terminationMessagePath'] ??= '/dev/termination-log';
    container['terminationMessagePolicy'] ??= 'File';
    for (const port of (container['ports'] as JsonObject[] | undefined) ?? []) {
      port['protocol'] ??= 'TCP';
      if (spec.hostNetwork === true) port['hostPort'] ??= port['containerPort'] ?? null;
    }
    for (const env of (container['env'] as JsonObject[] | undefined) ?? []) {
      const fieldRef = (env['valueFrom'] as { fieldRef?: JsonObject } | undefined)?.fieldRef;
      if (fieldRef) fieldRef['apiVersion'] ??= 'v1';
    }
    const resources = (container['resources'] ?? {}) as { limits?: Record<string, JsonValue>; requests?: Record<string, JsonValue> };
    if (resources.limits) resources.limits = stored(resources.limits);
    if (resources.requests) resources.requests = stored(resources.requests);
    if (resources.limits) resources.requests = { ...resources.limits, ...resources.requests };
    container['resources'] = resources as JsonObject;
  }
  return copy;
}

function stored(list: Record<string, JsonValue>): Record<string, JsonValue> {
  return Object.fromEntries(
    Object.entries(list).map(([key, value]) => {
      const pair = STORED_QUANTITIES.find(([given]) => given === value);
      if (!pair) throw new Error(`no stored form known for quantity ${JSON.stringify(value)}`);
      return [key, pair[1]];
    }),
  );
}
