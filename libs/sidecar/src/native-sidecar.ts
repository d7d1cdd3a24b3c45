import { denied, type DeniedResult, GO_BOOL_SPELLINGS, type JsonObject, member, objectMember, parseGoBool } from '@outrigger/admission';
import { type AgentProfile, NATIVE_SIDECAR_SUFFIX } from '@outrigger/agent-profiles';
import { podAnnotations, quoteValue } from './pod-annotations.js';
import { INVALID_ANNOTATION_REASON } from './requested-profiles.js';

/** A pod that chooses how its agent runs where the profile does not let it. */
export const NATIVE_SIDECAR_CHOICE_NOT_ALLOWED_REASON = 'native-sidecar-choice-not-allowed';

export function nativeSidecarAnnotation(profile: AgentProfile): string {
  return `${profile.annotationPrefix}${NATIVE_SIDECAR_SUFFIX}`;
}

/** A pod that runs to completion (a Job's or CronJob's, or any pod with restartPolicy Never or OnFailure). */
export function runsToCompletion(pod: JsonObject): boolean {
  const policy = member(objectMember(pod, 'spec') ?? {}, 'restartPolicy');
  return policy === 'Never' || policy === 'OnFailure';
}

/**
 * Whether the agent runs as a native sidecar (an init container with `restartPolicy: Always`) in
 * this pod, one decision for the injection and for verifying a stored pod: always in a pod that
 * runs to completion (a regular container would keep it from ever completing) and for a profile
 * that holds the application until the agent is ready; otherwise the pod's
 * `<prefix>native-sidecar` choice where the profile allows one, else the profile's nativeSidecar.
 * The annotation is refused when malformed or not allowed.
 */
export function runsAsNativeSidecar(profile: AgentProfile, pod: JsonObject): boolean | DeniedResult {
  const choice = podChoice(profile, pod);
  if (typeof choice === 'object') return choice;
  if (profile.holdApplicationUntilReady === true || runsToCompletion(pod)) return true;
  return choice ?? profile.nativeSidecar;
}

/** The list the agent is in: runsAsNativeSidecar, with a refused annotation read as absent. */
export function agentList(profile: AgentProfile, pod: JsonObject): 'initContainers' | 'containers' {
  const native = runsAsNativeSidecar(profile, pod);
  const asInit = typeof native === 'boolean' ? native : profile.nativeSidecar || profile.holdApplicationUntilReady === true || runsToCompletion(pod);
  return asInit ? 'initContainers' : 'containers';
}

function podChoice(profile: AgentProfile, pod: JsonObject): boolean | undefined | DeniedResult {
  const key = nativeSidecarAnnotation(profile);
  const annotations = podAnnotations(pod);
  if (annotations.nonString.has(key)) return denied(400, `annotation ${key} must be a string`, INVALID_ANNOTATION_REASON);
  const raw = annotations.values.get(key);
  if (raw === undefined) return undefined;
  const choice = parseGoBool(raw);
  if (choice === undefined) return denied(400, `annotation ${key}: invalid boolean ${quoteValue(raw)} (use one of ${GO_BOOL_SPELLINGS})`, INVALID_ANNOTATION_REASON);
  if (profile.podMayChooseNativeSidecar !== true) {
    return denied(403, `annotation ${key}: profile ${profile.name} does not let pods choose how its agent runs (spec.podMayChooseNativeSidecar is not true); remove the annotation`, NATIVE_SIDECAR_CHOICE_NOT_ALLOWED_REASON);
  }
  return choice;
}
