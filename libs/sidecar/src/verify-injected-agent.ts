import { arrayMember, isJsonObject, type JsonObject, member, objectMember, stringMember } from '@outrigger/admission';
import type { AgentProfile } from '@outrigger/agent-profiles';
import { buildAgentContainer } from './agent-container.js';
import { podPartsProblem } from './agent-pod-parts.js';
import { agentToken, type AgentToken } from './agent-token.js';
import { withApiServerDefaults } from './api-server-defaults.js';
import { hostNamespaceProblem } from './host-namespaces.js';
import { containerNames, statusAnnotation, statusProfile } from './injection-status.js';
import { jsonDifference, jsonEqual } from './json-difference.js';
import { runsAsNativeSidecar } from './native-sidecar.js';
import { type ResourceValues, storedOverrides } from './resource-overrides.js';
import { parameterEnv } from './parameter-values.js';
import { podAnnotations } from './pod-annotations.js';
import { AGENT_TOKEN_VOLUME, withServiceAccountToken } from './service-account-token.js';
import { tokenConfinementProblem } from './token-confinement.js';

export type AgentVerdict = { readonly ok: true } | { readonly ok: false; readonly problem: string };

const OK: AgentVerdict = { ok: true };

/**
 * Whether the pod carries this profile's agent exactly as the injector renders it for this pod
 * (parameters from its annotations, fieldEnv, static env, list and restartPolicy, token mount and
 * token volume, the pod's own token taken away where the profile says so, the profile's volumes
 * and image pull secrets in the pod, resources within the profile's override bounds), as the API server
 * stores it: only the defaults it applies are tolerated (withApiServerDefaults), any other
 * difference is a `problem` naming the field. The rbac-syncer binds only such pods. `inForce`:
 * the other profiles in force, whose verified agents may share the agent's token volume in a pod
 * with several agents; without them, only this profile's agent may mount it.
 */
export function verifyInjectedAgent(pod: JsonObject, profile: AgentProfile, inForce: readonly AgentProfile[] = []): AgentVerdict {
  return verify(pod, profile, inForce, true);
}

/** `confine`: check that only verified agents share the token (off for that nested check). */
function verify(pod: JsonObject, profile: AgentProfile, inForce: readonly AgentProfile[], confine: boolean): AgentVerdict {
  const spec = objectMember(pod, 'spec');
  if (!spec) return notOk('the pod has no spec');
  const host = hostNamespaceProblem(spec, profile);
  if (host !== undefined) return notOk(host);
  const metadata = objectMember(pod, 'metadata');
  const annotations = (metadata && objectMember(metadata, 'annotations')) ?? {};
  const key = statusAnnotation(profile);
  const status = stringMember(annotations, key);
  if (status === undefined) return notOk(`annotation ${key} is missing`);
  if (cachedStatusProfile(status) !== profile.name) return notOk(`annotation ${key} does not name profile ${profile.name}`);

  const name = profile.container.name;
  const native = runsAsNativeSidecar(profile, pod);
  if (typeof native !== 'boolean') return notOk(`the injector would refuse it: ${native.message}`);
  const list = native ? 'initContainers' : 'containers';
  const found = [...named(spec, 'containers', name), ...named(spec, 'initContainers', name)];
  const agent = found[0];
  if (!agent || found.length !== 1) return notOk(`the pod has ${found.length} containers named ${name}`);
  if (agent.list !== list) return notOk(`container ${name} is in ${agent.list}, the profile injects into ${list}`);

  const token = agentToken(profile, pod);
  if ('type' in token) return notOk(`the injector would refuse it: ${token.message}`);
  const isAgent = (container: string) => container === name || inForce.some((other) => other !== profile && other.container.name === container && verify(pod, other, inForce, false).ok);
  const tokenProblem = podTokenProblem(spec, token, confine ? isAgent : undefined);
  if (tokenProblem !== undefined) return notOk(tokenProblem);
  const partsProblem = podPartsProblem(spec, profile);
  if (partsProblem !== undefined) return notOk(partsProblem);

  const hostNetwork = member(spec, 'hostNetwork') === true;
  // Resources a namespace or the pod may set are taken as stored when within the profile's bounds.
  const rendered = rendering(profile, pod, annotations, hostNetwork, native, storedOverrides(profile, agent.value));
  if (typeof rendered === 'string') return notOk(rendered);
  const expected = withToken(rendered, token.mount);
  // As stored, the container already carries every default: compare as is, and only on a
  // difference again with the defaults filled in (the webhook's own output before defaulting).
  if (jsonEqual(expected, agent.value)) return OK;
  const difference = jsonDifference(expected, withApiServerDefaults(agent.value, hostNetwork));
  return difference === undefined ? OK : notOk(`container ${name}: ${difference} is not what the injector renders`);
}

function notOk(problem: string): AgentVerdict {
  return { ok: false, problem };
}

function named(spec: JsonObject, list: 'containers' | 'initContainers', name: string): { list: string; value: JsonObject }[] {
  const found: { list: string; value: JsonObject }[] = [];
  for (const value of arrayMember(spec, list) ?? []) if (isJsonObject(value) && stringMember(value, 'name') === name) found.push({ list, value });
  return found;
}

/** The pod-level part of the token decision: the agent's volume as written, and kept to the agents. */
function podTokenProblem(spec: JsonObject, token: AgentToken, isAgent: ((container: string) => boolean) | undefined): string | undefined {
  if (token.volume) {
    const volumes = (arrayMember(spec, 'volumes') ?? []).filter((v) => isJsonObject(v) && stringMember(v, 'name') === AGENT_TOKEN_VOLUME);
    if (volumes.length !== 1 || !jsonEqual(token.volume, volumes[0])) return `volume ${AGENT_TOKEN_VOLUME} is not what the injector writes`;
  }
  return token.podTokenRemoved && isAgent ? tokenConfinementProblem(spec, isAgent) : undefined;
}

/** The token mount depends on the pod's volumes, so it is added per pod, on a copy. */
function withToken(rendered: JsonObject, mount: JsonObject | undefined): JsonObject {
  if (!mount) return rendered;
  const agent = Object.assign({}, rendered);
  const mounts = arrayMember(rendered, 'volumeMounts');
  if (mounts) agent['volumeMounts'] = [...mounts];
  withServiceAccountToken(agent, mount);
  return agent;
}

// Memos, each cleared when full. Profiles are never changed once parsed, so a profile object is
// a key; the pods of one workload share one rendering, so a verification does no rendering work.
// Keys come from pods' annotations: longer ones are not kept, so no pod author can fill the memory.
const MEMO_SIZE = 4096;
const MEMO_KEY_MAX = 1024;
const renderings = new WeakMap<AgentProfile, Map<string, JsonObject | string>>();
const statusProfiles = new Map<string, string | undefined>();

/** The defaulted agent container for this pod's parameters, or why the injector would render none. */
function rendering(profile: AgentProfile, pod: JsonObject, annotations: JsonObject, hostNetwork: boolean, native: boolean, resources: ResourceValues): JsonObject | string {
  const podContainers = containerNames(pod, 'containers').filter((container) => container !== profile.container.name);
  const key = renderingKey(profile, annotations, podContainers, [hostNetwork, native], resources);
  let cache = renderings.get(profile);
  const cached = key === undefined ? undefined : cache?.get(key);
  if (cached !== undefined) return cached;
  const env = parameterEnv(profile, podAnnotations(pod), podContainers);
  const rendered = env.type === 'denied' ? `the injector would refuse it: ${env.message}` : withApiServerDefaults(buildAgentContainer(profile, env.env, native, resources), hostNetwork);
  if (key === undefined) return rendered;
  if (!cache) renderings.set(profile, (cache = new Map()));
  if (cache.size >= MEMO_SIZE) cache.clear();
  cache.set(key, rendered);
  return rendered;
}

/** What the rendering depends on besides the profile; undefined (no memo) for odd or long annotations. */
function renderingKey(profile: AgentProfile, annotations: JsonObject, podContainers: readonly string[], podFlags: readonly boolean[], resources: ResourceValues): string | undefined {
  const values: (string | null | boolean | readonly string[])[] = [...podFlags, ...[...resources].flat()];
  for (const parameter of profile.parameters) {
    const value = member(annotations, `${profile.annotationPrefix}${parameter.annotation}`);
    if (value !== undefined && typeof value !== 'string') return undefined;
    values.push(value ?? null);
  }
  if (profile.parameters.some((parameter) => parameter.containerName)) values.push(podContainers);
  const key = JSON.stringify(values);
  return key.length > MEMO_KEY_MAX ? undefined : key;
}

function cachedStatusProfile(status: string): string | undefined {
  if (status.length > MEMO_KEY_MAX) return statusProfile(status);
  if (statusProfiles.has(status)) return statusProfiles.get(status);
  if (statusProfiles.size >= MEMO_SIZE) statusProfiles.clear();
  const name = statusProfile(status);
  statusProfiles.set(status, name);
  return name;
}
