import { denied, type DeniedResult, GO_BOOL_SPELLINGS, INJECT_ANNOTATION, parseGoBool } from '@outrigger/admission';
import { type AgentProfile, ENABLE_SUFFIX } from '@outrigger/agent-profiles';
import { quoteValue, type PodAnnotations } from './pod-annotations.js';

export const INVALID_ANNOTATION_REASON = 'invalid-annotation';

export interface RequestedProfiles {
  readonly type: 'requested';
  /** In profile order, whatever order the pod named them in. */
  readonly profiles: readonly AgentProfile[];
  readonly warnings: readonly string[];
}

export function enableAnnotation(profile: AgentProfile): string {
  return `${profile.annotationPrefix}${ENABLE_SUFFIX}`;
}

/**
 * Which profiles the pod opted into: `<prefix>enable` parsed like Go's strconv.ParseBool, or a
 * name in `outrigger.dev/inject`. An explicit `<prefix>enable: "false"` wins over the list (the
 * pod author's opt-out beats a list that may come from a shared template).
 */
export function requestedProfiles(
  annotations: PodAnnotations,
  profiles: readonly AgentProfile[],
): RequestedProfiles | DeniedResult {
  const named = namedProfiles(annotations, profiles);
  if (named.type === 'denied') return named;

  const requested: AgentProfile[] = [];
  const warnings: string[] = [];
  for (const profile of profiles) {
    const key = enableAnnotation(profile);
    if (annotations.nonString.has(key)) return invalidAnnotation(`annotation ${key} must be a string`);
    const raw = annotations.values.get(key);
    const enabled = raw === undefined ? undefined : parseGoBool(raw);
    if (raw !== undefined && enabled === undefined) {
      return invalidAnnotation(`annotation ${key}: invalid boolean ${quoteValue(raw)} (use one of ${GO_BOOL_SPELLINGS})`);
    }
    if (enabled === true || (enabled === undefined && named.names.has(profile.name))) requested.push(profile);
    if (enabled === false && named.names.has(profile.name)) {
      warnings.push(`profile ${profile.name} is named in ${INJECT_ANNOTATION} but ${key} is "${raw}": not injected`);
    }
  }
  return { type: 'requested', profiles: requested, warnings };
}

function namedProfiles(
  annotations: PodAnnotations,
  profiles: readonly AgentProfile[],
): { type: 'named'; names: ReadonlySet<string> } | DeniedResult {
  if (annotations.nonString.has(INJECT_ANNOTATION)) return invalidAnnotation(`annotation ${INJECT_ANNOTATION} must be a string`);
  const raw = annotations.values.get(INJECT_ANNOTATION) ?? '';
  const names = raw
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
  const known = new Set(profiles.map((profile) => profile.name));
  const unknown = names.find((name) => !known.has(name));
  if (unknown !== undefined) {
    const list = [...known].join(', ') || 'none';
    return invalidAnnotation(`annotation ${INJECT_ANNOTATION}: unknown profile ${quoteValue(unknown)} (known profiles: ${list})`);
  }
  return { type: 'named', names: new Set(names) };
}

function invalidAnnotation(message: string): DeniedResult {
  return denied(400, message, INVALID_ANNOTATION_REASON);
}

/** Every annotation that can opt a pod in; feeds the webhook's `opted-in` match condition. */
export function optInAnnotationKeys(profiles: readonly AgentProfile[]): string[] {
  return [INJECT_ANNOTATION, ...profiles.map(enableAnnotation)];
}
