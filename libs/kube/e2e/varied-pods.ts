import { readFileSync } from 'node:fs';
import type { KubeConfig } from '@kubernetes/client-node';
import { createTestNamespace } from '@outrigger/control-plane';
import { parseAllDocuments } from 'yaml';
import { classifyApiError, KUBE_PROTOBUF, kubeJson, resourcePath, type KubeClient, type KubeObject, type KubeRequest } from '../src/index.js';

/** Pods that use most of what a PodSpec holds (fixtures/varied-pods.yaml). */
export const VARIED_PODS = parseAllDocuments(readFileSync(new URL('fixtures/varied-pods.yaml', import.meta.url), 'utf8')).map((doc) => doc.toJS() as KubeObject);

/** The fixture pods in a new namespace, one with a status written, one being deleted (held by its finalizer, which `release` lets go). */
export async function createVariedPods(kc: KubeConfig, client: KubeClient): Promise<{ namespace: string; release: () => Promise<void> }> {
  /** kubeJson, failing with the API server's message. */
  const call = (request: KubeRequest) =>
    kubeJson(client, request).catch((e: unknown) => {
      throw new Error(`${request.method} ${request.path}: ${classifyApiError(e).message}`);
    });
  const namespace = await createTestNamespace(kc, 'protobuf');
  const pods = resourcePath({ apiVersion: 'v1', resource: 'pods', namespace });
  await kubeJson(client, { method: 'POST', path: resourcePath({ apiVersion: 'v1', resource: 'serviceaccounts', namespace }), body: { metadata: { name: 'shop' } } });
  for (const pod of VARIED_PODS) await call({ method: 'POST', path: pods, body: { ...pod, metadata: { ...pod.metadata, namespace } } });
  const status = {
    phase: 'Running',
    podIP: '10.244.0.7',
    podIPs: [{ ip: '10.244.0.7' }],
    startTime: '2026-11-26T10:00:00Z',
    conditions: [{ type: 'Ready', status: 'False', lastProbeTime: null, lastTransitionTime: '2026-11-26T10:00:05Z', reason: 'ContainersNotReady' }],
    containerStatuses: [
      { name: 'app', image: 'busybox:1.36', imageID: '', ready: false, restartCount: 0, started: true, state: { running: { startedAt: '2026-11-26T10:00:02Z' } }, lastState: {} },
    ],
  };
  await call({ method: 'PATCH', path: `${pods}/minimal/status`, contentType: 'application/merge-patch+json', body: { status } });
  await kubeJson(client, { method: 'DELETE', path: `${pods}/kitchen-sink` });
  return {
    namespace,
    release: async () => {
      await kubeJson(client, { method: 'PATCH', path: `${pods}/kitchen-sink`, contentType: 'application/merge-patch+json', body: { metadata: { finalizers: null } } });
    },
  };
}

/** Each pod of `namespace`, sorted by name: the JSON the API server answers for it, and its answer in protobuf (content type and bytes). */
export async function podsInJsonAndProtobuf(client: KubeClient, namespace: string): Promise<{ name: string; json: KubeObject; contentType: unknown; bytes: Uint8Array }[]> {
  const path = resourcePath({ apiVersion: 'v1', resource: 'pods', namespace });
  const names = (await kubeJson<{ items: KubeObject[] }>(client, { path })).items.map((pod) => pod.metadata?.name ?? '').sort();
  const pods = [];
  for (const name of names) {
    const json = await kubeJson<KubeObject>(client, { path: `${path}/${name}` });
    const response = await client.request({ path: `${path}/${name}`, accept: KUBE_PROTOBUF });
    pods.push({ name, json, contentType: response.headers['content-type'], bytes: new Uint8Array(await new Response(response.body.stream()).arrayBuffer()) });
  }
  return pods;
}
