import { encodeCaBundle, INJECT_CA_FROM_ANNOTATION, type MutatingWebhookConfiguration } from '@outrigger/admission';
import { INSTALL_NAMES } from '@outrigger/install/names';
import { type GuardedPatchResult, type KubeObject, jsonPatchGuarded, jsonPointer, kubeJson, readObject, resourcePath, type KubeClient } from '@outrigger/kube';
import { SERVING_ANNOTATIONS, type SecretState } from '../rotation/index.js';

// The cert-manager's reads and writes on the API server: its two Secrets and the
// MutatingWebhookConfigurations whose caBundle it keeps. Nothing here looks inside a certificate.

export const FIELD_MANAGER = INSTALL_NAMES.certManager;
export const WEBHOOK_API_VERSION = 'admissionregistration.k8s.io/v1';
const TIMEOUT_MS = 15_000;
const OWN_ANNOTATIONS = new Set<string>(Object.values(SERVING_ANNOTATIONS));

/** A Secret as read from the API server: its decoded data (for observeState) plus what a guarded write needs. */
export interface FetchedSecret {
  readonly stored: SecretState;
  readonly resourceVersion: string;
  readonly type?: string;
  readonly raw: RawSecret;
}

export interface RawSecret extends KubeObject {
  readonly type?: string;
  readonly data?: Readonly<Record<string, string>>;
}

export interface RawWebhookConfiguration extends KubeObject {
  readonly webhooks?: ReadonlyArray<{ readonly name?: string; readonly clientConfig?: { readonly caBundle?: string } }>;
}

export function secretPath(namespace: string, name?: string): string {
  return resourcePath({ apiVersion: 'v1', resource: 'secrets', namespace, name });
}

export function webhookConfigurationsPath(name?: string): string {
  return resourcePath({ apiVersion: WEBHOOK_API_VERSION, resource: 'mutatingwebhookconfigurations', name });
}

/** Decoded data and only the planner's own annotations. */
export function secretState(secret: RawSecret): SecretState {
  const data = Object.fromEntries(Object.entries(secret.data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]));
  const annotations = Object.fromEntries(Object.entries(secret.metadata?.annotations ?? {}).filter(([k]) => OWN_ANNOTATIONS.has(k)));
  return Object.keys(annotations).length > 0 ? { data, annotations } : { data };
}

export async function readSecret(kc: KubeClient, namespace: string, name: string): Promise<FetchedSecret | undefined> {
  const raw = await readObject<RawSecret>(kc, { apiVersion: 'v1', kind: 'Secret', namespace, name }, { timeoutMs: TIMEOUT_MS });
  if (!raw) return undefined;
  return { stored: secretState(raw), resourceVersion: raw.metadata?.resourceVersion ?? '', type: raw.type, raw };
}

/**
 * Writes the whole Secret: data exactly as desired, our annotations set, other metadata kept.
 * An update carries the resourceVersion read (409 if anyone wrote since); a missing Secret is
 * created (409 if someone created it meanwhile). Either conflict throws and the run starts over.
 */
export async function writeSecret(
  kc: KubeClient,
  namespace: string,
  name: string,
  type: string,
  desired: SecretState,
  observed: FetchedSecret | undefined,
): Promise<RawSecret> {
  const keptAnnotations = Object.fromEntries(Object.entries(observed?.raw.metadata?.annotations ?? {}).filter(([k]) => !OWN_ANNOTATIONS.has(k)));
  const annotations = { ...keptAnnotations, ...(desired.annotations ?? {}) };
  const body = {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name,
      namespace,
      ...(observed ? { resourceVersion: observed.resourceVersion } : {}),
      labels: { ...(observed?.raw.metadata?.labels ?? {}), 'app.kubernetes.io/managed-by': FIELD_MANAGER },
      ...(Object.keys(annotations).length > 0 ? { annotations } : {}),
    },
    type,
    data: Object.fromEntries(Object.entries(desired.data).map(([k, v]) => [k, Buffer.from(v, 'utf8').toString('base64')])),
  };
  const query = { fieldManager: FIELD_MANAGER };
  return observed
    ? kubeJson<RawSecret>(kc, { method: 'PUT', path: secretPath(namespace, name), body, query, timeoutMs: TIMEOUT_MS })
    : kubeJson<RawSecret>(kc, { method: 'POST', path: secretPath(namespace), body, query, timeoutMs: TIMEOUT_MS });
}

export async function readWebhookConfiguration(kc: KubeClient, name: string): Promise<RawWebhookConfiguration | undefined> {
  return readObject<RawWebhookConfiguration>(kc, { apiVersion: WEBHOOK_API_VERSION, kind: 'MutatingWebhookConfiguration', name }, { timeoutMs: TIMEOUT_MS });
}

/** Selection: by name, or by `outrigger.dev/inject-ca-from` naming one of our Secrets. */
export function isManaged(
  obj: KubeObject,
  selection: { readonly names: readonly string[]; readonly selectByAnnotation: boolean; readonly secretRefs: readonly string[] },
): boolean {
  const name = obj.metadata?.name ?? '';
  if (selection.names.includes(name)) return true;
  const ref = obj.metadata?.annotations?.[INJECT_CA_FROM_ANNOTATION];
  return selection.selectByAnnotation && ref !== undefined && selection.secretRefs.includes(ref.trim());
}

/** `<configuration>/<webhook>`: the planner's id of one caBundle. */
export function webhookId(configuration: string, webhook: string): string {
  return `${configuration}/${webhook}`;
}

export function splitWebhookId(id: string): { configuration: string; webhook: string } {
  const slash = id.indexOf('/');
  return { configuration: id.slice(0, slash), webhook: id.slice(slash + 1) };
}

/**
 * Sets one webhook's caBundle and nothing else: a JSON patch behind tests of the resourceVersion
 * and of the webhook's name at that index.
 */
export async function patchCaBundle(
  kc: KubeClient,
  configuration: RawWebhookConfiguration,
  webhook: string,
  pemBundle: string,
): Promise<GuardedPatchResult<RawWebhookConfiguration> | { applied: false; reason: 'webhookGone' }> {
  const name = configuration.metadata?.name ?? '';
  const index = (configuration.webhooks ?? []).findIndex((w) => w.name === webhook);
  if (index < 0) return { applied: false, reason: 'webhookGone' };
  const hasBundle = configuration.webhooks?.[index]?.clientConfig?.caBundle !== undefined;
  return jsonPatchGuarded<RawWebhookConfiguration>(
    kc,
    { apiVersion: WEBHOOK_API_VERSION, kind: 'MutatingWebhookConfiguration', name },
    configuration.metadata?.resourceVersion ?? '',
    [
      { op: 'test', path: jsonPointer('webhooks', index, 'name'), value: webhook },
      { op: hasBundle ? 'replace' : 'add', path: jsonPointer('webhooks', index, 'clientConfig', 'caBundle'), value: encodeCaBundle(pemBundle) },
    ],
    { fieldManager: FIELD_MANAGER, timeoutMs: TIMEOUT_MS },
  );
}

export async function createWebhookConfiguration(kc: KubeClient, configuration: MutatingWebhookConfiguration): Promise<RawWebhookConfiguration> {
  return kubeJson<RawWebhookConfiguration>(kc, {
    method: 'POST',
    path: webhookConfigurationsPath(),
    body: configuration,
    query: { fieldManager: FIELD_MANAGER },
    timeoutMs: TIMEOUT_MS,
  });
}
