import { kubeConfigFrom } from '@outrigger/control-plane';
import { describe, expect, inject, it } from 'vitest';
import {
  classifyApiError,
  decodeKubeObject,
  KUBE_PROTOBUF,
  KUBE_PROTOBUF_SCHEMA,
  kubeJson,
  loadKubeClient,
  objectKey,
  Reflector,
  resourcePath,
  sharingMessages,
  streamWatch,
  type KubeObject,
  type WatchEvent,
} from '../src/index.js';
import { createVariedPods, podsInJsonAndProtobuf } from './varied-pods.js';

const SHARING_SCHEMA = sharingMessages(KUBE_PROTOBUF_SCHEMA, ['v1.Container', 'v1.Volume', 'v1.Probe']);

// The protobuf reader is only right if, for every pod, it rebuilds exactly the JSON the API server
// sends for it: compared here object by object, over pods that use most of what a PodSpec holds.

describe('Kubernetes protobuf, decoded with the generated schema', () => {
  const cp = inject('controlPlane');
  const kc = kubeConfigFrom(cp.kubeconfigPath);
  const client = loadKubeClient(cp.kubeconfigPath);

  const variedPods = () => createVariedPods(kc, client);

  it('decodes each pod of a GET to the JSON the API server answers for it', async () => {
    const { namespace, release } = await variedPods();
    try {
      const pods = await podsInJsonAndProtobuf(client, namespace);
      expect(pods.map((pod) => pod.name)).toEqual(['kitchen-sink', 'minimal', 'probes-by-number']);
      for (const { name, json, contentType, bytes } of pods) {
        expect(contentType).toBe(KUBE_PROTOBUF);
        expect(decodeKubeObject(KUBE_PROTOBUF_SCHEMA, bytes), name).toStrictEqual(json);
        // Shared messages: the first decoding and the one reusing it are the same JSON.
        for (const round of ['first', 'shared']) expect(decodeKubeObject(SHARING_SCHEMA, bytes), `${name}, ${round}`).toStrictEqual(json);
      }
      const path = resourcePath({ apiVersion: 'v1', resource: 'pods', namespace });
      const sink = await kubeJson<KubeObject>(client, { path: `${path}/kitchen-sink` });
      expect(sink.metadata?.['deletionTimestamp'], 'the fixture pod being deleted').toEqual(expect.any(String));
    } finally {
      await release();
    }
  });

  it('streams the same events, in protobuf as in JSON, for a watch with its initial events', async () => {
    const { namespace, release } = await variedPods();
    try {
      const path = resourcePath({ apiVersion: 'v1', resource: 'pods', namespace });
      const watch = async (protobuf: boolean): Promise<WatchEvent[]> => {
        const events: WatchEvent[] = [];
        const stop = new AbortController();
        const query = { sendInitialEvents: true, resourceVersionMatch: 'NotOlderThan', allowWatchBookmarks: true };
        const onEvent = (event: WatchEvent) => {
          if (event.type === 'BOOKMARK' && event.object.metadata?.annotations?.['k8s.io/initial-events-end'] === 'true') stop.abort();
          else events.push(event);
        };
        const ended = await streamWatch(client, path, query, stop.signal, onEvent, protobuf ? KUBE_PROTOBUF_SCHEMA : undefined).catch((e: unknown) => e);
        expect(classifyApiError(ended).kind).toBe('aborted');
        return events.sort((a, b) => objectKey(a.object).localeCompare(objectKey(b.object)));
      };
      const json = await watch(false);
      expect(json.map((e) => `${e.type} ${e.object.metadata?.name}`)).toEqual(['ADDED kitchen-sink', 'ADDED minimal', 'ADDED probes-by-number']);
      expect(await watch(true)).toStrictEqual(json);
    } finally {
      await release();
    }
  });

  it('reads a refused watch in protobuf as the Status it carries', async () => {
    const path = resourcePath({ apiVersion: 'v1', resource: 'pods', namespace: 'default' });
    const refused = await streamWatch(client, path, { fieldSelector: 'spec.noSuchField=x', timeoutSeconds: 5 }, new AbortController().signal, () => undefined, KUBE_PROTOBUF_SCHEMA).catch((e: unknown) => e);
    const info = classifyApiError(refused);
    expect(info.kind).toBe('badRequest');
    expect(info.message).toMatch(/spec\.noSuchField/);
  });

  it('gives a reflector in protobuf the same projections as one in JSON', async () => {
    const { namespace, release } = await variedPods();
    try {
      const path = resourcePath({ apiVersion: 'v1', resource: 'pods', namespace });
      const reflect = async (protobuf: boolean) => {
        const reflector = new Reflector<KubeObject>(client, { path, project: (pod) => pod, streamingList: true, ...(protobuf ? { protobuf: KUBE_PROTOBUF_SCHEMA } : {}) }).start();
        await reflector.whenSynced();
        const entries = reflector.entries().sort(([a], [b]) => a.localeCompare(b));
        await reflector.stop();
        return entries;
      };
      const json = await reflect(false);
      expect(json).toHaveLength(3);
      expect(await reflect(true)).toStrictEqual(json);
    } finally {
      await release();
    }
  });
});
