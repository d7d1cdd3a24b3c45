import { arrayMember, isJsonObject, type JsonObject, type JsonValue, member, objectMember, setMember, stringMember } from '@outrigger/admission';
import { canonicalQuantity } from './canonical-quantity.js';

/**
 * A container with what the API server adds to it on create, and with canonical quantities, so a
 * rendering and a stored container compare equal exactly when they mean the same: core/v1
 * SetDefaults_Container (imagePullPolicy by the tag rule, terminationMessagePath and -Policy),
 * SetDefaults_ContainerPort (protocol), SetDefaults_PodSpec (hostPort on hostNetwork pods),
 * SetDefaults_Pod (requests from limits), fieldRef apiVersion, resourceFieldRef divisor,
 * SetDefaults_Probe (timeout 1, period 10, thresholds 1 and 3), SetDefaults_HTTPGetAction (path
 * "/", scheme HTTP) in probes and hooks, the grpc probe's empty service, and an empty `resources`.
 * Only absent members are filled in; untouched members are shared with the input, never copied.
 */
export function withApiServerDefaults(container: JsonObject, hostNetwork: boolean): JsonObject {
  const out = shallowCopy(container);
  const image = stringMember(container, 'image');
  if (member(out, 'imagePullPolicy') === undefined && image !== undefined) setMember(out, 'imagePullPolicy', defaultPullPolicy(image));
  if (member(out, 'terminationMessagePath') === undefined) setMember(out, 'terminationMessagePath', '/dev/termination-log');
  if (member(out, 'terminationMessagePolicy') === undefined) setMember(out, 'terminationMessagePolicy', 'File');
  const resources = member(out, 'resources');
  if (resources === undefined) setMember(out, 'resources', {});
  else if (isJsonObject(resources)) setMember(out, 'resources', defaultResources(resources));
  const ports = arrayMember(out, 'ports');
  if (ports) setMember(out, 'ports', ports.map((port) => (isJsonObject(port) ? defaultPort(port, hostNetwork) : port)));
  const env = arrayMember(out, 'env');
  if (env) setMember(out, 'env', env.map(defaultEnv));
  for (const key of ['livenessProbe', 'readinessProbe', 'startupProbe']) {
    const probe = objectMember(out, key);
    if (probe) setMember(out, key, defaultProbe(probe));
  }
  const lifecycle = objectMember(out, 'lifecycle');
  if (lifecycle) {
    const hooks = shallowCopy(lifecycle);
    for (const key of ['postStart', 'preStop']) {
      const hook = objectMember(hooks, key);
      if (hook) setMember(hooks, key, defaultHttpGet(hook));
    }
    setMember(out, 'lifecycle', hooks);
  }
  return out;
}

const PROBE_DEFAULTS: readonly [string, number][] = [['timeoutSeconds', 1], ['periodSeconds', 10], ['successThreshold', 1], ['failureThreshold', 3]];

function defaultProbe(probe: JsonObject): JsonObject {
  const out = defaultHttpGet(probe);
  for (const [key, value] of PROBE_DEFAULTS) if (member(out, key) === undefined) setMember(out, key, value);
  const grpc = objectMember(out, 'grpc');
  if (grpc && member(grpc, 'service') === undefined) setMember(out, 'grpc', Object.assign(shallowCopy(grpc), { service: '' }));
  return out;
}

/** A probe or hook handler with its httpGet's path and scheme defaulted. */
function defaultHttpGet(handler: JsonObject): JsonObject {
  const out = shallowCopy(handler);
  const httpGet = objectMember(out, 'httpGet');
  if (!httpGet) return out;
  const action = shallowCopy(httpGet);
  if (member(action, 'path') === undefined || member(action, 'path') === '') setMember(action, 'path', '/');
  if (member(action, 'scheme') === undefined || member(action, 'scheme') === '') setMember(action, 'scheme', 'HTTP');
  setMember(out, 'httpGet', action);
  return out;
}

/** Go's image parser: no tag and no digest means "latest", which is pulled Always. */
export function defaultPullPolicy(image: string): 'Always' | 'IfNotPresent' {
  const [name = '', digest] = image.split('@');
  const colon = name.lastIndexOf(':');
  const tag = colon > name.lastIndexOf('/') ? name.slice(colon + 1) : undefined;
  return tag === 'latest' || (tag === undefined && digest === undefined) ? 'Always' : 'IfNotPresent';
}

function defaultResources(resources: JsonObject): JsonObject {
  const out = shallowCopy(resources);
  const limits = canonicalList(member(resources, 'limits'));
  const requests = canonicalList(member(resources, 'requests'));
  if (isJsonObject(limits) && (requests === undefined || isJsonObject(requests))) {
    const merged = requests === undefined ? {} : requests;
    for (const key of Object.keys(limits)) if (member(merged, key) === undefined) setMember(merged, key, limits[key] ?? null);
    setOrDrop(out, 'requests', merged);
  } else if (requests !== undefined) setOrDrop(out, 'requests', requests);
  if (limits !== undefined) setOrDrop(out, 'limits', limits);
  return out;
}

/** A ResourceList with each quantity canonical (an invalid one is kept as given: it differs). */
function canonicalList(list: JsonValue | undefined): JsonValue | undefined {
  if (!isJsonObject(list)) return list;
  const out: JsonObject = {};
  for (const key of Object.keys(list)) setMember(out, key, canonicalQuantity(list[key]) ?? list[key] ?? null);
  return out;
}

/** An empty map is left out when the API server writes the object back (omitempty). */
function setOrDrop(parent: JsonObject, key: string, value: JsonValue): void {
  if (isJsonObject(value) && Object.keys(value).length === 0) delete parent[key];
  else setMember(parent, key, value);
}

function defaultPort(port: JsonObject, hostNetwork: boolean): JsonObject {
  const out = shallowCopy(port);
  if (member(out, 'protocol') === undefined) setMember(out, 'protocol', 'TCP');
  if (hostNetwork && member(out, 'hostPort') === undefined && member(out, 'containerPort') !== undefined) setMember(out, 'hostPort', member(out, 'containerPort') ?? null);
  return out;
}

function defaultEnv(entry: JsonValue): JsonValue {
  const valueFrom = isJsonObject(entry) ? objectMember(entry, 'valueFrom') : undefined;
  const resourceFieldRef = valueFrom ? objectMember(valueFrom, 'resourceFieldRef') : undefined;
  if (isJsonObject(entry) && valueFrom && resourceFieldRef) {
    // divisor is a Quantity, not a pointer: stored canonical, "0" when unset.
    const divisor = member(resourceFieldRef, 'divisor');
    const ref = Object.assign(shallowCopy(resourceFieldRef), { divisor: divisor === undefined ? '0' : (canonicalQuantity(divisor) ?? divisor) });
    return Object.assign(shallowCopy(entry), { valueFrom: Object.assign(shallowCopy(valueFrom), { resourceFieldRef: ref }) });
  }
  const fieldRef = valueFrom ? objectMember(valueFrom, 'fieldRef') : undefined;
  if (!isJsonObject(entry) || !valueFrom || !fieldRef || member(fieldRef, 'apiVersion') !== undefined) return entry;
  const out = shallowCopy(entry);
  const from = shallowCopy(valueFrom);
  const ref = shallowCopy(fieldRef);
  setMember(ref, 'apiVersion', 'v1');
  setMember(from, 'fieldRef', ref);
  setMember(out, 'valueFrom', from);
  return out;
}

/** Own keys only, `__proto__` kept as data (as JSON.parse makes it). */
function shallowCopy(value: JsonObject): JsonObject {
  const out: JsonObject = {};
  for (const key of Object.keys(value)) {
    if (key === '__proto__') setMember(out, key, value[key] ?? null);
    else out[key] = value[key] ?? null;
  }
  return out;
}
