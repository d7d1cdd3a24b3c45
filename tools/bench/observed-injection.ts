import { isDeepStrictEqual } from 'node:util';
import type { Injection } from './independent-webhook.js';

/** A pod as the API server returns it, the parts the bench compares. */
export interface StoredPod {
  readonly metadata: { readonly annotations?: Readonly<Record<string, string>> } & Readonly<Record<string, unknown>>;
  readonly spec: {
    readonly containers: readonly ({ readonly name: string; readonly volumeMounts?: readonly ({ readonly name: string } & Readonly<Record<string, unknown>>)[] } & Readonly<Record<string, unknown>>)[];
    readonly volumes?: readonly ({ readonly name: string } & Readonly<Record<string, unknown>>)[];
  } & Readonly<Record<string, unknown>>;
}

/** The ServiceAccount admission plugin's token volume, kube-api-access-<random>. */
const PLUGIN_TOKEN_VOLUME = /^kube-api-access-/;

/**
 * What a webhook did to a pod, read from the same pod created (dry run) without it (`plain`) and
 * with it (`injected`): the containers, volumes, annotations and pod spec fields it added, and
 * whether it took the ServiceAccount plugin's token away. Anything else it changed is an error:
 * the independent peer must be able to do exactly the same.
 */
export function observedInjection(plain: StoredPod, injected: StoredPod): Injection {
  const names = (list: readonly { name: string }[] | undefined) => new Set((list ?? []).map((item) => item.name));
  const plainContainers = names(plain.spec.containers);
  const plainVolumes = names(plain.spec.volumes);
  const dropsToken = (plain.spec.volumes ?? []).some((v) => PLUGIN_TOKEN_VOLUME.test(v.name)) && !(injected.spec.volumes ?? []).some((v) => PLUGIN_TOKEN_VOLUME.test(v.name));
  const annotations = Object.fromEntries(Object.entries(injected.metadata.annotations ?? {}).filter(([key, value]) => plain.metadata.annotations?.[key] !== value));
  const spec = Object.fromEntries(
    Object.entries(injected.spec).filter(([field, value]) => !['containers', 'volumes'].includes(field) && !isDeepStrictEqual(plain.spec[field], value)),
  );
  const injection: Injection = {
    containers: injected.spec.containers.filter((c) => !plainContainers.has(c.name)),
    volumes: (injected.spec.volumes ?? []).filter((v) => !plainVolumes.has(v.name) && !PLUGIN_TOKEN_VOLUME.test(v.name)),
    annotations,
    spec,
    dropServiceAccountToken: dropsToken,
  };
  const problems = differences(withoutIdentity(applyInjection(plain, injection)), withoutIdentity(injected));
  if (problems.length > 0) throw new Error(`the webhook changed more than a peer can repeat: ${problems.join('; ')}`);
  return injection;
}

/** The pod `injection` makes of `pod`, as the independent webhook's patch would (for the check above). */
export function applyInjection(pod: StoredPod, injection: Injection): StoredPod {
  const out = structuredClone(pod) as { metadata: { annotations?: Record<string, string> }; spec: { containers: { name: string; volumeMounts?: { name: string }[] }[]; volumes?: { name: string }[] } & Record<string, unknown> };
  if (injection.dropServiceAccountToken) {
    const token = out.spec.volumes?.find((v) => PLUGIN_TOKEN_VOLUME.test(v.name))?.name;
    out.spec.volumes = out.spec.volumes?.filter((v) => v.name !== token);
    for (const c of out.spec.containers) {
      if (c.volumeMounts) c.volumeMounts = c.volumeMounts.filter((m) => m.name !== token);
      if (c.volumeMounts?.length === 0) delete c.volumeMounts;
    }
    if (out.spec.volumes?.length === 0) delete out.spec.volumes;
  }
  out.spec.containers.push(...(structuredClone(injection.containers) as { name: string }[]));
  if ((injection.volumes ?? []).length > 0) out.spec.volumes = [...(out.spec.volumes ?? []), ...(structuredClone(injection.volumes) as { name: string }[])];
  Object.assign(out.spec, structuredClone(injection.spec ?? {}));
  if (Object.keys(injection.annotations ?? {}).length > 0) out.metadata.annotations = { ...out.metadata.annotations, ...injection.annotations };
  return out as StoredPod;
}

/**
 * Two created pods compared without what differs per object (name, uid, times, the token volume's
 * random suffix); an empty list counts as absent, as the API server stores it.
 */
export function withoutIdentity(pod: StoredPod): unknown {
  const { name: _n, generateName: _g, uid: _u, resourceVersion: _r, creationTimestamp: _c, namespace: _ns, managedFields: _m, ...metadata } = pod.metadata;
  const text = JSON.stringify({ metadata, spec: pod.spec }).replace(/kube-api-access-[a-z0-9]+/g, 'kube-api-access-*');
  return JSON.parse(text, (_key, value: unknown) => (Array.isArray(value) && value.length === 0 ? undefined : value)) as unknown;
}

/** JSON paths at which `a` and `b` differ (at most a few). */
export function differences(a: unknown, b: unknown, path = '', out: string[] = []): string[] {
  if (out.length >= 5 || isDeepStrictEqual(a, b)) return out;
  if (a && b && typeof a === 'object' && typeof b === 'object' && Array.isArray(a) === Array.isArray(b)) {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    for (const key of keys) differences((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key], `${path}/${key}`, out);
    return out;
  }
  out.push(`${path || '/'}: ${JSON.stringify(a)?.slice(0, 80)} vs ${JSON.stringify(b)?.slice(0, 80)}`);
  return out;
}
