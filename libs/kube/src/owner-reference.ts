import type { KubeObject } from './kube-object.js';

/** An object's controller (its ownerReference with `controller: true`): who made it. */
export interface ControllerRef {
  readonly apiVersion: string;
  readonly kind: string;
  readonly name: string;
  readonly uid: string;
}

/** The controller among an object's `metadata.ownerReferences`, if a well-formed one is there. */
export function controllerOf(obj: KubeObject | undefined): ControllerRef | undefined {
  const references = obj?.metadata?.['ownerReferences'];
  if (!Array.isArray(references)) return undefined;
  for (const reference of references as unknown[]) {
    if (typeof reference !== 'object' || reference === null) continue;
    const { controller, apiVersion, kind, name, uid } = reference as Record<string, unknown>;
    if (controller !== true) continue;
    if (typeof apiVersion === 'string' && typeof kind === 'string' && typeof name === 'string' && typeof uid === 'string') return { apiVersion, kind, name, uid };
  }
  return undefined;
}
