import { arrayMember, isJsonObject, type JsonObject, objectMember, stringMember } from '@outrigger/admission';
import { type AgentProfile, profileHash, STATUS_SUFFIX } from '@outrigger/agent-profiles';
import type { AddedPodParts } from './agent-pod-parts.js';
import { agentList } from './native-sidecar.js';
import type { PodAnnotations } from './pod-annotations.js';

/** `<prefix>status`: written on injection, so a second admission (reinvocation) does nothing. */
export function statusAnnotation(profile: AgentProfile): string {
  return `${profile.annotationPrefix}${STATUS_SUFFIX}`;
}

/**
 * The status value: which profile, which exact profile content, which injector, whether the
 * injector set `automountServiceAccountToken: false`, and the volumes and image pull secrets it
 * added (so that uninject can take out exactly those again). Each only when there is one.
 */
export function statusValue(profile: AgentProfile, injectorVersion: string, automountOff = false, added?: AddedPodParts): string {
  return JSON.stringify({
    profile: profile.name,
    hash: profileHash(profile),
    version: injectorVersion,
    ...(automountOff ? { automountOff } : {}),
    ...(added && added.volumes.length > 0 ? { volumes: added.volumes } : {}),
    ...(added && added.imagePullSecrets.length > 0 ? { imagePullSecrets: added.imagePullSecrets } : {}),
  });
}

/** The volumes and image pull secrets a status value says the injector added. */
export function statusAddedParts(value: string): AddedPodParts {
  try {
    const parsed: unknown = JSON.parse(value);
    const strings = (key: string) => (isJsonObject(parsed) && Array.isArray(parsed[key]) ? parsed[key].filter((v): v is string => typeof v === 'string') : []);
    return { volumes: strings('volumes'), imagePullSecrets: strings('imagePullSecrets') };
  } catch {
    return { volumes: [], imagePullSecrets: [] };
  }
}

/** Whether a status value says the injector turned the pod's automatic token off. */
export function statusTurnedAutomountOff(value: string): boolean {
  try {
    const parsed: unknown = JSON.parse(value);
    return isJsonObject(parsed) && parsed['automountOff'] === true;
  } catch {
    return false;
  }
}

/**
 * Whether a pod carries a profile's agent as the injector writes it: `absent` (neither the status
 * annotation nor a container with the agent's name), `injected` (the status annotation names the
 * profile and a container has the agent's name), or `forged` (anything else, with the reason).
 * `injected` is the shape only: verifyInjectedAgent says whether the agent is exactly the
 * injector's, which binding requires.
 */
export type AgentPresence = { readonly kind: 'absent' } | { readonly kind: 'injected' } | { readonly kind: 'forged'; readonly problem: string };

export function agentPresence(pod: JsonObject, annotations: PodAnnotations, profile: AgentProfile): AgentPresence {
  const key = statusAnnotation(profile);
  const status = annotations.values.get(key);
  const hasStatus = status !== undefined || annotations.nonString.has(key);
  const name = profile.container.name;
  const list = agentList(profile, pod);
  const container = [...namedContainers(pod, 'containers'), ...namedContainers(pod, 'initContainers')].find((c) => c.name === name);
  if (!hasStatus && !container) return { kind: 'absent' };
  const forged = (problem: string): AgentPresence => ({ kind: 'forged', problem: `profile ${profile.name}: ${problem}` });
  if (!container) return forged(`annotation ${key} is set but the pod has no ${name} container; only the injector writes it (remove the annotation)`);
  // With the injector's status, whatever differs (even the image or the list) is judged against the rendering.
  if (status !== undefined && statusProfile(status) === profile.name) return { kind: 'injected' };
  if (hasStatus) return forged(`annotation ${key} was not written by the injector (remove it)`);
  const image = stringMember(container.value, 'image') ?? '';
  if (container.list !== list || imageRepository(image) !== imageRepository(profile.container.image)) {
    return forged(
      `container ${name} has the name of the profile's agent but is not it (image ${JSON.stringify(image)} in ${container.list}; the agent is ${profile.container.image} in ${list}); rename the container`,
    );
  }
  return forged(`the pod brings its own ${name} container; the injector adds the agent (remove the container)`);
}

/** The image without tag or digest: an upgraded profile still recognises the agents of running pods. */
export function imageRepository(image: string): string {
  const withoutDigest = image.split('@')[0] ?? '';
  const colon = withoutDigest.lastIndexOf(':');
  return colon > withoutDigest.lastIndexOf('/') ? withoutDigest.slice(0, colon) : withoutDigest;
}

/** The profile a status value names, if it is one the injector could have written. */
export function statusProfile(value: string): string | undefined {
  try {
    const parsed: unknown = JSON.parse(value);
    return isJsonObject(parsed) ? stringMember(parsed, 'profile') : undefined;
  } catch {
    return undefined;
  }
}

function namedContainers(pod: JsonObject, list: 'containers' | 'initContainers'): { name: string; list: string; value: JsonObject }[] {
  const spec = objectMember(pod, 'spec');
  return (spec ? (arrayMember(spec, list) ?? []) : []).flatMap((value) => {
    const name = isJsonObject(value) ? stringMember(value, 'name') : undefined;
    return name === undefined || !isJsonObject(value) ? [] : [{ name, list, value }];
  });
}

/** Names of the containers in `spec[list]`, skipping malformed entries. */
export function containerNames(pod: JsonObject, list: 'containers' | 'initContainers'): string[] {
  const spec = objectMember(pod, 'spec');
  const containers = spec ? arrayMember(spec, list) : undefined;
  return (containers ?? []).flatMap((container) => {
    const name = isJsonObject(container) ? stringMember(container, 'name') : undefined;
    return name === undefined ? [] : [name];
  });
}
