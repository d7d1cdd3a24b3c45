import type { KubeObject } from './kube-object.js';

/** An object's controller (its ownerReference with `controller: true`): who made it. */
export interface ControllerRef {
  readonly apiVersion: string;
  readonly kind: string;
  readonly name: string;
  readonly uid: string;
}

/** The controller among an object's `metadata.ownerReferences`, if a well-formed one is there (see wellFormed). */
export function controllerOf(obj: KubeObject | undefined): ControllerRef | undefined {
  const references = obj?.metadata?.['ownerReferences'];
  if (!Array.isArray(references)) return undefined;
  for (const reference of references as unknown[]) {
    if (typeof reference !== 'object' || reference === null) continue;
    const { controller, apiVersion, kind, name, uid } = reference as Record<string, unknown>;
    if (controller !== true) continue;
    if (typeof apiVersion === 'string' && typeof kind === 'string' && typeof name === 'string' && typeof uid === 'string') {
      const ref = { apiVersion, kind, name, uid };
      return wellFormed(ref) ? ref : undefined;
    }
  }
  return undefined;
}

// The API server checks only that these are not empty: whoever writes the object may put a megabyte in each.
const API_VERSION = /^(?:[a-z0-9](?:[-a-z0-9.]{0,251}[a-z0-9])?\/)?[a-z0-9]{1,63}$/;
const KIND = /^[A-Za-z][A-Za-z0-9]{0,62}$/;
const NAME = /^[^/%]{1,253}$/;
const UID = /^[-A-Za-z0-9]{1,128}$/;

/** Whether a reference could name a real object (a path-segment name, a group/version, a Kind, a UID): what callers keep and send is bounded. */
function wellFormed(ref: ControllerRef): boolean {
  return API_VERSION.test(ref.apiVersion) && KIND.test(ref.kind) && NAME.test(ref.name) && ref.name !== '.' && ref.name !== '..' && UID.test(ref.uid);
}
