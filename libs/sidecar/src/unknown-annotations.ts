import { type AgentProfile, ENABLE_SUFFIX, KEEP_POD_TOKEN_SUFFIX, NATIVE_SIDECAR_SUFFIX, OVERRIDABLE_RESOURCES, STATUS_SUFFIX } from '@outrigger/agent-profiles';
import type { PodAnnotations } from './pod-annotations.js';

/** Annotations under the profile's prefix that it does not define: likely typos, worth a warning. */
export function unknownProfileAnnotations(profile: AgentProfile, annotations: PodAnnotations): string[] {
  const known = new Set([ENABLE_SUFFIX, STATUS_SUFFIX, KEEP_POD_TOKEN_SUFFIX, NATIVE_SIDECAR_SUFFIX, ...OVERRIDABLE_RESOURCES, ...profile.parameters.map((p) => p.annotation)]);
  const keys = [...annotations.values.keys(), ...annotations.nonString];
  return keys
    .filter((key) => key.startsWith(profile.annotationPrefix) && !known.has(key.slice(profile.annotationPrefix.length)))
    .sort();
}
