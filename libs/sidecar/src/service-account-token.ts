import { arrayMember, cloneJson, ensureArrayMember, isJsonObject, type JsonObject, type JsonValue, member, stringMember } from '@outrigger/admission';

/** Where the API server's ServiceAccount admission plugin mounts the API token in each container. */
export const SERVICE_ACCOUNT_TOKEN_PATH = '/var/run/secrets/kubernetes.io/serviceaccount';
/** The prefix of the projected volume that plugin adds (kube-api-access-<random>). */
export const SERVICE_ACCOUNT_VOLUME_PREFIX = 'kube-api-access-';

/**
 * The token mount the ServiceAccount admission plugin gave the pod's containers, if it gave them one:
 * the first `kube-api-access-` volume (the one that plugin picks), mounted read-only at the token
 * path in some container. The plugin runs before the webhooks; see `withServiceAccountToken`.
 */
export function serviceAccountTokenMount(spec: JsonObject): JsonObject | undefined {
  const volume = (arrayMember(spec, 'volumes') ?? [])
    .map((v) => (isJsonObject(v) ? stringMember(v, 'name') : undefined))
    .find((name) => name?.startsWith(SERVICE_ACCOUNT_VOLUME_PREFIX));
  if (volume === undefined) return undefined;
  const isTokenMount = (m: JsonValue) => isJsonObject(m) && stringMember(m, 'name') === volume && stringMember(m, 'mountPath') === SERVICE_ACCOUNT_TOKEN_PATH && member(m, 'readOnly') === true;
  const mounted = ['initContainers', 'containers'].some((list) => (arrayMember(spec, list) ?? []).some((c) => isJsonObject(c) && (arrayMember(c, 'volumeMounts') ?? []).some(isTokenMount)));
  return mounted ? { name: volume, readOnly: true, mountPath: SERVICE_ACCOUNT_TOKEN_PATH } : undefined;
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
