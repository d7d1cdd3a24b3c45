import { isJsonObject, type JsonObject, type JsonValue } from '@outrigger/admission';

/** Test-only accessors for raw pods, failing loudly when a fixture is not shaped as expected. */
export function objectAt(value: JsonValue | undefined, ...path: string[]): JsonObject {
  let current = value;
  for (const key of path) current = isJsonObject(current) ? current[key] : undefined;
  if (!isJsonObject(current)) throw new Error(`no object at ${path.join('.')}`);
  return current;
}

export function arrayAt(value: JsonValue | undefined, ...path: string[]): JsonValue[] {
  const parent = objectAt(value, ...path.slice(0, -1));
  const list = parent[path[path.length - 1] ?? ''];
  if (!Array.isArray(list)) throw new Error(`no list at ${path.join('.')}`);
  return list;
}

/**
 * Grows a pod to about `bytes` of JSON by giving its first container many env vars, the way a
 * generated config can bloat a real pod. Annotations are capped at 256 KiB by Kubernetes, env
 * is not, so this is how a 1.5 MiB pod really looks.
 */
export function inflatePod(pod: JsonObject, bytes: number): JsonObject {
  const copy = structuredClone(pod);
  const container = arrayAt(copy, 'spec', 'containers')[0];
  if (!isJsonObject(container)) throw new Error('pod has no first container');
  const env = Array.isArray(container['env']) ? container['env'] : [];
  let size = JSON.stringify(copy).length;
  for (let index = 0; size < bytes; index += 1) {
    const entry = { name: `GENERATED_SETTING_${index}`, value: `value-${index}-${'x'.repeat(48)}` };
    env.push(entry);
    size += JSON.stringify(entry).length + 1;
  }
  container['env'] = env;
  return copy;
}
