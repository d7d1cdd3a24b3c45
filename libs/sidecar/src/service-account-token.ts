import { arrayMember, cloneJson, ensureArrayMember, isJsonObject, type JsonObject, type JsonValue, member, SERVICE_ACCOUNT_TOKEN_PATH, setMember, stringMember } from '@outrigger/admission';

export { SERVICE_ACCOUNT_TOKEN_PATH };
/** The prefix of the projected volume that plugin adds (kube-api-access-<random>). */
export const SERVICE_ACCOUNT_VOLUME_PREFIX = 'kube-api-access-';
/** The agent's own token volume; not under the plugin's prefix, so the plugin never takes it for its own. */
export const AGENT_TOKEN_VOLUME = 'outrigger-agent-token';

/**
 * The agent's own token volume: what the ServiceAccount plugin projects (a bound token of the
 * pod's ServiceAccount, the cluster CA, the namespace), written out as the API server stores it.
 */
export function agentTokenVolume(): JsonObject {
  return {
    name: AGENT_TOKEN_VOLUME,
    projected: {
      sources: [
        { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
        { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
        { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
      ],
      defaultMode: 420,
    },
  };
}

/**
 * The token mount an agent in this pod gets: the agent's own volume when the pod has it, else the
 * mount the ServiceAccount plugin gave the pod's containers (pluginTokenMount), if any.
 */
export function serviceAccountTokenMount(spec: JsonObject): JsonObject | undefined {
  const own = (arrayMember(spec, 'volumes') ?? []).some((v) => isJsonObject(v) && stringMember(v, 'name') === AGENT_TOKEN_VOLUME);
  return own ? tokenMount(AGENT_TOKEN_VOLUME) : pluginTokenMount(spec);
}

/**
 * The token mount the ServiceAccount admission plugin gave the pod's containers, if it gave them
 * one: the first `kube-api-access-` volume (the one that plugin picks), mounted read-only at the
 * token path in some container. The plugin runs before the webhooks; see `withServiceAccountToken`.
 */
export function pluginTokenMount(spec: JsonObject): JsonObject | undefined {
  const volume = pluginTokenVolume(spec);
  if (volume === undefined) return undefined;
  const isTokenMount = (m: JsonValue) => isJsonObject(m) && stringMember(m, 'name') === volume && stringMember(m, 'mountPath') === SERVICE_ACCOUNT_TOKEN_PATH && member(m, 'readOnly') === true;
  const mounted = ['initContainers', 'containers'].some((list) => (arrayMember(spec, list) ?? []).some((c) => isJsonObject(c) && (arrayMember(c, 'volumeMounts') ?? []).some(isTokenMount)));
  return mounted ? tokenMount(volume) : undefined;
}

/**
 * Gives the agent the token mount exactly as the ServiceAccount plugin would: appended, unless the
 * container already mounts something at the token path. Left to that plugin, it is added when the
 * API server re-runs admission after our patch (reinvocationPolicy IfNeeded), and the pod changed
 * by it makes the API server call the webhook a second time on every pod create, for nothing.
 */
export function withServiceAccountToken(container: JsonObject, mount: JsonObject | undefined): void {
  if (!mount) return;
  const mounts = arrayMember(container, 'volumeMounts') ?? [];
  if (mounts.some((m) => isJsonObject(m) && stringMember(m, 'mountPath') === SERVICE_ACCOUNT_TOKEN_PATH)) return;
  ensureArrayMember(container, 'volumeMounts').push(cloneJson(mount));
}

/**
 * Takes the pod's own token away: `automountServiceAccountToken: false`, so the plugin mounts
 * nothing when the API server re-runs it, and the volume it already added, with every mount of it.
 */
export function removePodToken(spec: JsonObject): void {
  setMember(spec, 'automountServiceAccountToken', false);
  const volume = pluginTokenVolume(spec);
  if (volume === undefined) return;
  const volumes = arrayMember(spec, 'volumes') ?? [];
  volumes.splice(volumes.findIndex((v) => isJsonObject(v) && stringMember(v, 'name') === volume), 1);
  for (const list of ['initContainers', 'containers']) {
    for (const container of arrayMember(spec, list) ?? []) {
      const mounts = isJsonObject(container) ? arrayMember(container, 'volumeMounts') : undefined;
      if (!mounts) continue;
      for (let i = mounts.length - 1; i >= 0; i--) if (isJsonObject(mounts[i]) && stringMember(mounts[i] as JsonObject, 'name') === volume) mounts.splice(i, 1);
    }
  }
}

/** The plugin's volume: the first whose name has its prefix. */
function pluginTokenVolume(spec: JsonObject): string | undefined {
  return (arrayMember(spec, 'volumes') ?? [])
    .map((v) => (isJsonObject(v) ? stringMember(v, 'name') : undefined))
    .find((name) => name?.startsWith(SERVICE_ACCOUNT_VOLUME_PREFIX));
}

function tokenMount(volume: string): JsonObject {
  return { name: volume, readOnly: true, mountPath: SERVICE_ACCOUNT_TOKEN_PATH };
}
