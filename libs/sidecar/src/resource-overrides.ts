import { denied, type DeniedResult, isJsonObject, type JsonObject, member, objectMember, QUANTITY } from '@outrigger/admission';
import { type AgentProfile, OVERRIDABLE_RESOURCES, type OverridableResource, quantityValue } from '@outrigger/agent-profiles';
import { quoteValue, type PodAnnotations } from './pod-annotations.js';

/** An override the profile does not allow, or one outside its bounds, or that would put a request above its limit. */
export const RESOURCE_OVERRIDE_REASON = 'resource-override';

/** The annotations of a namespace the webhook injects in (its defaults for the agents' resources). */
export type NamespaceAnnotations = (namespace: string) => Readonly<Record<string, string>> | undefined;

/** Resource → quantity, as given (the API server stores it canonical). */
export type ResourceValues = ReadonlyMap<OverridableResource, string>;

const split = (resource: OverridableResource) => resource.split('.') as ['requests' | 'limits', string];

/**
 * The agent's resources as the namespace and the pod set them: for each resource, the pod's
 * `<prefix><resource>` annotation, else the namespace's. Refused (naming the annotation and where
 * it is): a resource the profile does not let anyone change, a malformed quantity, one outside the
 * profile's [min, max], and a request that would end above its limit (the API server refuses such
 * a pod).
 */
export function resourceOverrides(profile: AgentProfile, pod: PodAnnotations, namespace: Readonly<Record<string, string>> | undefined, namespaceName: string): ResourceValues | DeniedResult {
  const values = new Map<OverridableResource, string>();
  const source = new Map<OverridableResource, string>();
  for (const resource of OVERRIDABLE_RESOURCES) {
    const key = `${profile.annotationPrefix}${resource}`;
    if (pod.nonString.has(key)) return refuse(400, `annotation ${key} must be a string`);
    const fromPod = pod.values.get(key);
    const given = fromPod ?? namespace?.[key];
    if (given === undefined) continue;
    const where = fromPod !== undefined ? `annotation ${key}` : `annotation ${key} of namespace ${namespaceName}`;
    const bound = profile.overrides?.resources.find((entry) => entry.resource === resource);
    if (!bound) return refuse(403, `${where}: profile ${profile.name} does not let ${resource} of its agent be changed (spec.overrides.resources has no ${resource}); remove the annotation`);
    const value = quantityValue(given);
    if (value === undefined) {
      const why = QUANTITY.test(given) ? 'lies beyond any resource (more than 64 digits, or an exponent beyond ±64)' : 'is not a Kubernetes quantity like 100m or 64Mi';
      return refuse(422, `${where}: ${quoteValue(given)} ${why}`);
    }
    if (value < (quantityValue(bound.min) ?? 0n) || value > (quantityValue(bound.max) ?? 0n)) {
      return refuse(422, `${where}: ${quoteValue(given)} is outside the bounds of profile ${profile.name}: ${resource} from ${bound.min} to ${bound.max}`);
    }
    values.set(resource, given);
    source.set(resource, where);
  }
  if (values.size === 0) {
    // Nothing overridden: the verdict on the profile's own resources, the same for every pod.
    let verdict = unchangedVerdicts.get(profile);
    if (!verdict) unchangedVerdicts.set(profile, (verdict = withinLimits(profile, values, source)));
    return verdict;
  }
  return withinLimits(profile, values, source);
}

const unchangedVerdicts = new WeakMap<AgentProfile, ResourceValues | DeniedResult>();

/** `values`, unless a request would end above its limit with them set in the profile's resources. */
function withinLimits(profile: AgentProfile, values: Map<OverridableResource, string>, source: ReadonlyMap<OverridableResource, string>): ResourceValues | DeniedResult {
  const resources = withValues(profile.container.resources ?? {}, values);
  for (const name of ['cpu', 'memory']) {
    const request = stringQuantity(objectMember(resources, 'requests'), name);
    const limit = stringQuantity(objectMember(resources, 'limits'), name);
    if (request === undefined || limit === undefined || request.value <= limit.value) continue;
    const by = [source.get(`requests.${name}` as OverridableResource), source.get(`limits.${name}` as OverridableResource)].filter((s) => s !== undefined).join(' and ');
    return refuse(422, `${by}: the agent's ${name} request ${request.text} would be above its limit ${limit.text}`);
  }
  return values;
}

/** The profile's resources with `values` set in (a copy). */
export function withValues(resources: Readonly<Record<string, unknown>>, values: ResourceValues): JsonObject {
  const out = structuredClone(resources) as JsonObject;
  for (const [resource, value] of values) {
    const [list, name] = split(resource);
    const target = objectMember(out, list) ?? {};
    target[name] = value;
    out[list] = target;
  }
  return out;
}

/**
 * The overridable resources of a stored agent that lie within the profile's bounds: what the
 * verifier takes as given (the namespace default in force at creation is not known later).
 */
export function storedOverrides(profile: AgentProfile, agent: JsonObject): ResourceValues {
  const values = new Map<OverridableResource, string>();
  const resources = objectMember(agent, 'resources') ?? {};
  for (const bound of profile.overrides?.resources ?? []) {
    const [list, name] = split(bound.resource);
    const stored = stringQuantity(objectMember(resources, list), name);
    if (stored && stored.value >= (quantityValue(bound.min) ?? 0n) && stored.value <= (quantityValue(bound.max) ?? 0n)) values.set(bound.resource, stored.text);
  }
  return values;
}

function stringQuantity(list: JsonObject | undefined, name: string): { text: string; value: bigint } | undefined {
  const raw = list && isJsonObject(list) ? member(list, name) : undefined;
  const text = typeof raw === 'number' ? String(raw) : raw;
  const value = typeof text === 'string' ? quantityValue(text) : undefined;
  return value === undefined || typeof text !== 'string' ? undefined : { text, value };
}

function refuse(code: number, message: string): DeniedResult {
  return denied(code, message, RESOURCE_OVERRIDE_REASON);
}
