import { denied, type DeniedResult } from '@outrigger/admission';
import { type AgentProfile, ENABLE_SUFFIX, KEEP_POD_TOKEN_SUFFIX, NATIVE_SIDECAR_SUFFIX, OVERRIDABLE_RESOURCES, STATUS_SUFFIX } from '@outrigger/agent-profiles';
import type { PodAnnotations } from './pod-annotations.js';

/** An opted-in pod with an annotation under the profile's prefix that the profile does not define. */
export const UNKNOWN_ANNOTATION_REASON = 'unknown-annotation';

/**
 * Refuses annotations under the profile's prefix that it does not define, naming them and those it
 * knows: a misspelt override or parameter would otherwise be dropped without a word.
 */
export function unknownAnnotationRefusal(profile: AgentProfile, annotations: PodAnnotations): DeniedResult | undefined {
  const known = [ENABLE_SUFFIX, STATUS_SUFFIX, KEEP_POD_TOKEN_SUFFIX, NATIVE_SIDECAR_SUFFIX, ...OVERRIDABLE_RESOURCES, ...profile.parameters.map((p) => p.annotation)];
  const unknown = [...annotations.values.keys(), ...annotations.nonString].filter((key) => key.startsWith(profile.annotationPrefix) && !known.includes(key.slice(profile.annotationPrefix.length))).sort();
  if (unknown.length === 0) return undefined;
  const which = unknown.length === 1 ? `annotation ${unknown[0]}` : `annotations ${unknown.join(', ')}`;
  return denied(422, `${which}: profile ${profile.name} defines no such annotation (under ${profile.annotationPrefix} it knows ${[...known].sort().join(', ')}); correct or remove it`, UNKNOWN_ANNOTATION_REASON);
}
