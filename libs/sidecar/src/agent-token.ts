import { isDeepStrictEqual } from 'node:util';
import { arrayMember, denied, type DeniedResult, ensureArrayMember, GO_BOOL_SPELLINGS, isJsonObject, type JsonObject, member, objectMember, parseGoBool, stringMember } from '@outrigger/admission';
import { type AgentProfile, KEEP_POD_TOKEN_SUFFIX } from '@outrigger/agent-profiles';
import { podAnnotations, quoteValue } from './pod-annotations.js';
import { INVALID_ANNOTATION_REASON } from './requested-profiles.js';
import { AGENT_TOKEN_VOLUME, agentTokenVolume, removePodToken, SERVICE_ACCOUNT_TOKEN_PATH, serviceAccountTokenMount } from './service-account-token.js';

/** A pod that asks to keep its token where the profile does not allow it. */
export const POD_TOKEN_NOT_ALLOWED_REASON = 'keep-pod-token-not-allowed';

/** How the agent of one profile gets its API token in one pod. */
export interface AgentToken {
  /** The agent's one mount at the token path, or undefined when the pod offers it no token. */
  readonly mount: JsonObject | undefined;
  /** The agent's own token volume (agentTokenVolume), which the pod must then carry exactly. */
  readonly volume: JsonObject | undefined;
  /**
   * The pod's own token is taken away: `automountServiceAccountToken: false` and no other container
   * mounts the ServiceAccount plugin's `kube-api-access-` volume.
   */
  readonly podTokenRemoved: boolean;
}

export function keepPodTokenAnnotation(profile: AgentProfile): string {
  return `${profile.annotationPrefix}${KEEP_POD_TOKEN_SUFFIX}`;
}

/**
 * The token decision, one function for the injection and for verifying a stored pod (both give the
 * same answer for a pod the injector wrote): with `serviceAccountToken.agentOnly`, or in a pod that
 * sets `automountServiceAccountToken: false`, the agent mounts its own projected token volume;
 * otherwise it shares the pod's token mount. With agentOnly the pod's own token is removed unless
 * it asks to keep it (`<prefix>keep-pod-token: "true"`) and the profile allows that
 * (`podMayKeepToken`); the annotation is refused on any other profile.
 */
export function agentToken(profile: AgentProfile, pod: JsonObject): AgentToken | DeniedResult {
  const keep = keepsPodToken(profile, pod);
  if (typeof keep !== 'boolean') return keep;
  const spec = objectMember(pod, 'spec') ?? {};
  const agentOnly = profile.serviceAccountToken?.agentOnly === true;
  const own = agentOnly || member(spec, 'automountServiceAccountToken') === false;
  return {
    mount: own ? { name: AGENT_TOKEN_VOLUME, readOnly: true, mountPath: SERVICE_ACCOUNT_TOKEN_PATH } : serviceAccountTokenMount(spec),
    volume: own ? agentTokenVolume() : undefined,
    podTokenRemoved: agentOnly && !keep,
  };
}

/** The keep-pod-token annotation, parsed like the opt-in; a denial when it is malformed or not allowed. */
function keepsPodToken(profile: AgentProfile, pod: JsonObject): boolean | DeniedResult {
  const key = keepPodTokenAnnotation(profile);
  const annotations = podAnnotations(pod);
  if (annotations.nonString.has(key)) return denied(400, `annotation ${key} must be a string`, INVALID_ANNOTATION_REASON);
  const raw = annotations.values.get(key);
  if (raw === undefined) return false;
  const keep = parseGoBool(raw);
  if (keep === undefined) return denied(400, `annotation ${key}: invalid boolean ${quoteValue(raw)} (use one of ${GO_BOOL_SPELLINGS})`, INVALID_ANNOTATION_REASON);
  if (keep && profile.serviceAccountToken?.podMayKeepToken !== true) {
    const message = `annotation ${key}: profile ${profile.name} does not let pods keep their own API token (spec.serviceAccountToken.podMayKeepToken is not true); remove the annotation`;
    return denied(403, message, POD_TOKEN_NOT_ALLOWED_REASON);
  }
  return keep;
}

/** An opted-in pod that already uses the name of the agent's token volume for something else. */
export const TOKEN_VOLUME_TAKEN_REASON = 'token-volume-taken';

/** What prepareAgentTokens did to the pod's own token. */
export interface PreparedTokens {
  readonly type: 'prepared';
  /** It set `automountServiceAccountToken: false` (the pod had not). */
  readonly automountTurnedOff: boolean;
}

/**
 * Readies a pod for the agents of `profiles` (before they are added): refuses what agentToken
 * refuses and a pod that uses the agent's volume name itself, removes the pod's own token where a
 * profile takes it away, and adds the agent's token volume where an agent needs it. Each agent's
 * mount is then agentToken(profile, pod).mount, on the pod as changed here.
 */
export function prepareAgentTokens(pod: JsonObject, spec: JsonObject, profiles: readonly AgentProfile[]): DeniedResult | PreparedTokens {
  const tokens: AgentToken[] = [];
  for (const profile of profiles) {
    const token = agentToken(profile, pod);
    if ('type' in token) return token;
    tokens.push(token);
  }
  const taken = tokenVolumeTaken(spec);
  if (taken !== undefined) return denied(422, taken, TOKEN_VOLUME_TAKEN_REASON);
  const automountTurnedOff = tokens.some((token) => token.podTokenRemoved) && member(spec, 'automountServiceAccountToken') !== false;
  // Only an agentOnly profile removes the pod's token, and its agent needs the volume anyway.
  if (tokens.some((token) => token.podTokenRemoved)) removePodToken(spec);
  const present = (arrayMember(spec, 'volumes') ?? []).some((v) => isJsonObject(v) && stringMember(v, 'name') === AGENT_TOKEN_VOLUME);
  if (!present && tokens.some((token) => token.volume !== undefined)) ensureArrayMember(spec, 'volumes').push(agentTokenVolume());
  return { type: 'prepared', automountTurnedOff };
}

/** Why the pod may not get the agent's token volume: it has a volume of that name not as the injector writes it, or mounts one it lacks. */
function tokenVolumeTaken(spec: JsonObject): string | undefined {
  const volume = (arrayMember(spec, 'volumes') ?? []).find((v) => isJsonObject(v) && stringMember(v, 'name') === AGENT_TOKEN_VOLUME);
  if (volume !== undefined) {
    return isDeepStrictEqual(volume, agentTokenVolume()) ? undefined : `volume ${AGENT_TOKEN_VOLUME} is the name of the agent's token volume, which only the injector writes; rename the volume`;
  }
  for (const list of ['initContainers', 'containers']) {
    for (const container of arrayMember(spec, list) ?? []) {
      const mounts = isJsonObject(container) ? (arrayMember(container, 'volumeMounts') ?? []) : [];
      if (mounts.some((m) => isJsonObject(m) && stringMember(m, 'name') === AGENT_TOKEN_VOLUME)) {
        return `container ${isJsonObject(container) ? (stringMember(container, 'name') ?? '') : ''} mounts ${AGENT_TOKEN_VOLUME}, the agent's token volume, which only the injector adds; remove the mount`;
      }
    }
  }
  return undefined;
}
