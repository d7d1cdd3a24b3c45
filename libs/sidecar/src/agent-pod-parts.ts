import { arrayMember, cloneJson, ensureArrayMember, isJsonObject, type JsonObject, type JsonValue, member, objectMember, setMember, stringMember } from '@outrigger/admission';
import type { AgentProfile } from '@outrigger/agent-profiles';
import { canonicalQuantity } from './canonical-quantity.js';
import { jsonDifference } from './json-difference.js';
import { AGENT_TOKEN_VOLUME, SERVICE_ACCOUNT_VOLUME_PREFIX } from './service-account-token.js';

/** An opted-in pod whose own volumes or mounts use the name of a volume the agent brings. */
export const VOLUME_NAME_TAKEN_REASON = 'volume-name-taken';

/** What the injector added to the pod besides the container, recorded in the status annotation for uninject. */
export interface AddedPodParts {
  readonly volumes: readonly string[];
  readonly imagePullSecrets: readonly string[];
}

function names(spec: JsonObject, list: 'volumes' | 'imagePullSecrets'): string[] {
  return (arrayMember(spec, list) ?? []).flatMap((entry) => {
    const name = isJsonObject(entry) ? stringMember(entry, 'name') : undefined;
    return name === undefined ? [] : [name];
  });
}

/**
 * Why the agents of `profiles` cannot bring their volumes into this pod: a volume name the pod
 * (or an agent before it in the list) already has, one the injector or the ServiceAccount plugin
 * uses for the token, or one a container of the pod mounts already (it would get the agent's volume).
 */
export function volumeClash(spec: JsonObject, profiles: readonly AgentProfile[]): string | undefined {
  const taken = new Map(names(spec, 'volumes').map((name) => [name, 'the pod has a volume of that name']));
  const mounted = new Map<string, string>();
  for (const list of ['initContainers', 'containers']) {
    for (const container of arrayMember(spec, list) ?? []) {
      if (!isJsonObject(container)) continue;
      for (const mount of arrayMember(container, 'volumeMounts') ?? []) {
        const name = isJsonObject(mount) ? stringMember(mount, 'name') : undefined;
        if (name !== undefined && !mounted.has(name)) mounted.set(name, `container ${stringMember(container, 'name') ?? ''} mounts a volume of that name`);
      }
    }
  }
  for (const profile of profiles) {
    for (const volume of profile.volumes ?? []) {
      const why =
        taken.get(volume.name) ??
        mounted.get(volume.name) ??
        (volume.name === AGENT_TOKEN_VOLUME || volume.name.startsWith(SERVICE_ACCOUNT_VOLUME_PREFIX) ? 'the name is the API token volume\'s' : undefined);
      if (why !== undefined) return `profile ${profile.name} brings volume ${volume.name}, but ${why}; rename the pod's volume (two profiles that bring the same volume name cannot share a pod)`;
      taken.set(volume.name, `profile ${profile.name} brings a volume of that name too`);
    }
  }
  return undefined;
}

/** Appends the profile's volumes and the image pull secrets the pod lacks; returns what it added. */
export function addPodParts(spec: JsonObject, profile: AgentProfile): AddedPodParts {
  const volumes = (profile.volumes ?? []).map((volume) => volume.name);
  for (const volume of profile.volumes ?? []) ensureArrayMember(spec, 'volumes').push(cloneJson(volume as JsonObject));
  const present = new Set(names(spec, 'imagePullSecrets'));
  const imagePullSecrets = (profile.imagePullSecrets ?? []).map((secret) => secret.name).filter((name) => !present.has(name));
  for (const name of imagePullSecrets) ensureArrayMember(spec, 'imagePullSecrets').push({ name });
  return { volumes, imagePullSecrets };
}

/**
 * A container other than the profile's agent (an ephemeral one included) that mounts a volume the
 * agent brings, or undefined. Those volumes are the agent's alone: a container added later or
 * written into a copy of the pod could read the agent's credentials, or plant files it trusts.
 */
export function foreignVolumeMount(spec: JsonObject, profile: AgentProfile): string | undefined {
  const brought = new Set((profile.volumes ?? []).map((volume) => volume.name));
  if (brought.size === 0) return undefined;
  for (const list of ['initContainers', 'containers', 'ephemeralContainers']) {
    for (const container of arrayMember(spec, list) ?? []) {
      const name = isJsonObject(container) ? stringMember(container, 'name') : undefined;
      if (!isJsonObject(container) || name === profile.container.name) continue;
      const mount = (arrayMember(container, 'volumeMounts') ?? []).find((m) => isJsonObject(m) && brought.has(stringMember(m, 'name') ?? ''));
      if (mount !== undefined && isJsonObject(mount)) return `container ${name ?? ''} mounts ${stringMember(mount, 'name') ?? ''}, a volume the agent brings`;
    }
  }
  return undefined;
}

/** Why the pod does not carry the profile's volumes (as the API server stores them, the agent's alone) and pull secrets, or undefined. */
export function podPartsProblem(spec: JsonObject, profile: AgentProfile): string | undefined {
  const foreign = foreignVolumeMount(spec, profile);
  if (foreign !== undefined) return foreign;
  const volumes = (arrayMember(spec, 'volumes') ?? []).filter(isJsonObject);
  for (const volume of profile.volumes ?? []) {
    const found = volumes.filter((v) => stringMember(v, 'name') === volume.name);
    if (found.length !== 1 || found[0] === undefined) return `the pod has ${found.length} volumes named ${volume.name}`;
    const difference = jsonDifference(withVolumeDefaults(volume as JsonObject), withVolumeDefaults(found[0]));
    if (difference !== undefined) return `volume ${volume.name}: ${difference} is not what the injector adds`;
  }
  const secrets = new Set(names(spec, 'imagePullSecrets'));
  const missing = (profile.imagePullSecrets ?? []).find((secret) => !secrets.has(secret.name));
  return missing === undefined ? undefined : `imagePullSecrets lacks ${missing.name}`;
}

const MODE_DEFAULT = 420;

/**
 * A volume with what the API server adds on create (core/v1 SetDefaults_*VolumeSource: 0644
 * default modes, hostPath type "", fieldRef apiVersion), an empty emptyDir medium left out as it
 * stores it, and sizeLimit canonical. Only for the volume types a profile may bring.
 */
export function withVolumeDefaults(volume: JsonObject): JsonObject {
  const out = cloneJson(volume);
  for (const type of ['configMap', 'secret', 'projected']) {
    const source = objectMember(out, type);
    if (source && member(source, 'defaultMode') === undefined) setMember(source, 'defaultMode', MODE_DEFAULT);
  }
  const hostPath = objectMember(out, 'hostPath');
  if (hostPath && member(hostPath, 'type') === undefined) setMember(hostPath, 'type', '');
  const emptyDir = objectMember(out, 'emptyDir');
  if (emptyDir && member(emptyDir, 'medium') === '') delete emptyDir['medium'];
  const sizeLimit = emptyDir ? member(emptyDir, 'sizeLimit') : undefined;
  if (emptyDir && sizeLimit !== undefined) setMember(emptyDir, 'sizeLimit', canonicalQuantity(sizeLimit) ?? sizeLimit);
  const projected = objectMember(out, 'projected');
  for (const source of projected ? (arrayMember(projected, 'sources') ?? []) : []) {
    const downward = isJsonObject(source) ? objectMember(source, 'downwardAPI') : undefined;
    for (const item of downward ? (arrayMember(downward, 'items') ?? []) : []) defaultFieldRef(item);
  }
  return out;
}

function defaultFieldRef(item: JsonValue): void {
  const fieldRef = isJsonObject(item) ? objectMember(item, 'fieldRef') : undefined;
  if (fieldRef && member(fieldRef, 'apiVersion') === undefined) setMember(fieldRef, 'apiVersion', 'v1');
}
