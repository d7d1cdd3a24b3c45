import { isJsonObject, type JsonObject } from '@outrigger/admission';

/** An object's controller (its ownerReference with controller: true): who made it. */
export interface PodOwner {
  readonly apiVersion: string;
  readonly kind: string;
  readonly name: string;
  readonly uid: string;
}

/** The controller among `metadata.ownerReferences`, if a well-formed one is there. */
export function controllerOf(metadata: JsonObject): PodOwner | undefined {
  const references = Array.isArray(metadata['ownerReferences']) ? metadata['ownerReferences'] : [];
  for (const reference of references) {
    if (!isJsonObject(reference) || reference['controller'] !== true) continue;
    const { kind, name, uid, apiVersion } = reference;
    if (typeof kind === 'string' && typeof name === 'string' && typeof uid === 'string' && typeof apiVersion === 'string') return { apiVersion, kind, name, uid };
  }
  return undefined;
}
