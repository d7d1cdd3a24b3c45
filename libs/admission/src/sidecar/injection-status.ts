import { arrayMember, isJsonObject, objectMember, stringMember, type JsonObject } from '../json.js';
import { profileHash } from '../profiles/profile-hash.js';
import { STATUS_SUFFIX, type AgentProfile } from '../profiles/profile-schema.js';
import type { PodAnnotations } from './pod-annotations.js';

/** `<prefix>status`: written on injection, so a second admission (reinvocation) does nothing. */
export function statusAnnotation(profile: AgentProfile): string {
  return `${profile.annotationPrefix}${STATUS_SUFFIX}`;
}

/** The status value: which profile, which exact profile content, which injector. */
export function statusValue(profile: AgentProfile, injectorVersion: string): string {
  return JSON.stringify({ profile: profile.name, hash: profileHash(profile), version: injectorVersion });
}

/** Injected before if the status annotation exists or a container already has the agent's name. */
export function isAlreadyInjected(pod: JsonObject, annotations: PodAnnotations, profile: AgentProfile): boolean {
  const key = statusAnnotation(profile);
  if (annotations.values.has(key) || annotations.nonString.has(key)) return true;
  return containerNames(pod, 'containers').includes(profile.container.name) ||
    containerNames(pod, 'initContainers').includes(profile.container.name);
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
