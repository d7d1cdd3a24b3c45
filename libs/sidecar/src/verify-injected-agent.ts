import { arrayMember, isJsonObject, type JsonObject, member, objectMember, stringMember } from '@outrigger/admission';
import type { AgentProfile } from '@outrigger/agent-profiles';
import { buildAgentContainer } from './agent-container.js';
import { withApiServerDefaults } from './api-server-defaults.js';
import { hostNamespaceProblem } from './host-namespaces.js';
import { containerNames, statusAnnotation, statusProfile } from './injection-status.js';
import { jsonDifference } from './json-difference.js';
import { parameterEnv } from './parameter-values.js';
import { podAnnotations, type PodAnnotations } from './pod-annotations.js';
import { serviceAccountTokenMount, withServiceAccountToken } from './service-account-token.js';

export type AgentVerdict = { readonly ok: true } | { readonly ok: false; readonly problem: string };

const OK: AgentVerdict = { ok: true };

/**
 * Whether the pod carries this profile's agent exactly as the injector renders it for this pod
 * (parameters from its annotations, fieldEnv, static env, list and restartPolicy, token mount),
 * as the API server stores it: only the defaults it applies are tolerated (withApiServerDefaults),
 * any other difference is a `problem` naming the field. The rbac-syncer binds only such pods.
 */
export function verifyInjectedAgent(pod: JsonObject, profile: AgentProfile): AgentVerdict {
  const spec = objectMember(pod, 'spec');
  if (!spec) return notOk('the pod has no spec');
  const host = hostNamespaceProblem(spec, profile);
  if (host !== undefined) return notOk(host);
  const annotations = podAnnotations(pod);
  const key = statusAnnotation(profile);
  const status = annotations.values.get(key);
  if (status === undefined) return notOk(`annotation ${key} is missing`);
  if (statusProfile(status) !== profile.name) return notOk(`annotation ${key} does not name profile ${profile.name}`);

  const name = profile.container.name;
  const list = profile.nativeSidecar ? 'initContainers' : 'containers';
  const found = [...named(spec, 'containers', name), ...named(spec, 'initContainers', name)];
  if (found.length !== 1) return notOk(`the pod has ${found.length} containers named ${name}`);
  const [agent] = found;
  if (!agent || agent.list !== list) return notOk(`container ${name} is in ${agent?.list ?? 'no list'}, the profile injects into ${list}`);

  const hostNetwork = member(spec, 'hostNetwork') === true;
  const podContainers = containerNames(pod, 'containers').filter((container) => container !== name);
  const rendered = rendering(profile, annotations, podContainers, hostNetwork);
  if (typeof rendered === 'string') return notOk(rendered);
  const difference = jsonDifference(withToken(rendered, spec), withApiServerDefaults(agent.value, hostNetwork));
  return difference === undefined ? OK : notOk(`container ${name}: ${difference} is not what the injector renders`);
}

function notOk(problem: string): AgentVerdict {
  return { ok: false, problem };
}

function named(spec: JsonObject, list: 'containers' | 'initContainers', name: string): { list: string; value: JsonObject }[] {
  return (arrayMember(spec, list) ?? []).flatMap((value) => (isJsonObject(value) && stringMember(value, 'name') === name ? [{ list, value }] : []));
}

/** The token mount depends on the pod's volumes, so it is added per pod, on a copy. */
function withToken(rendered: JsonObject, spec: JsonObject): JsonObject {
  const mount = serviceAccountTokenMount(spec);
  if (!mount) return rendered;
  const agent = Object.assign({}, rendered);
  const mounts = arrayMember(rendered, 'volumeMounts');
  if (mounts) agent['volumeMounts'] = [...mounts];
  withServiceAccountToken(agent, mount);
  return agent;
}

// Renderings per profile object (profiles are never changed once parsed) and parameter values:
// the pods of one workload share one, so a verification does no rendering work.
const renderings = new WeakMap<AgentProfile, Map<string, JsonObject | string>>();
const MAX_RENDERINGS_PER_PROFILE = 4096;

/** The defaulted agent container for these annotations, or why there is none. */
function rendering(profile: AgentProfile, annotations: PodAnnotations, podContainers: readonly string[], hostNetwork: boolean): JsonObject | string {
  const key = renderingKey(profile, annotations, podContainers, hostNetwork);
  let cache = renderings.get(profile);
  const cached = key === undefined ? undefined : cache?.get(key);
  if (cached !== undefined) return cached;
  const env = parameterEnv(profile, annotations, podContainers);
  const rendered = env.type === 'denied' ? `the injector would refuse it: ${env.message}` : withApiServerDefaults(buildAgentContainer(profile, env.env), hostNetwork);
  if (key === undefined) return rendered;
  if (!cache) renderings.set(profile, (cache = new Map()));
  if (cache.size >= MAX_RENDERINGS_PER_PROFILE) cache.clear();
  cache.set(key, rendered);
  return rendered;
}

/** What the rendering depends on besides the profile; undefined (no memo) for odd annotations. */
function renderingKey(profile: AgentProfile, annotations: PodAnnotations, podContainers: readonly string[], hostNetwork: boolean): string | undefined {
  const values: (string | null | boolean | readonly string[])[] = [hostNetwork];
  for (const parameter of profile.parameters) {
    const annotation = `${profile.annotationPrefix}${parameter.annotation}`;
    if (annotations.nonString.has(annotation)) return undefined;
    values.push(annotations.values.get(annotation) ?? null);
  }
  if (profile.parameters.some((parameter) => parameter.containerName)) values.push(podContainers);
  return JSON.stringify(values);
}

