import { type ControlPlane, floorApiServer, kubeConfigFrom, startControlPlane } from '@outrigger/control-plane';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { decodeKubeObject, KUBE_PROTOBUF, KUBE_PROTOBUF_SCHEMA, loadKubeClient, type KubeClient, Reflector, resourcePath } from '../src/index.js';
import { createVariedPods, podsInJsonAndProtobuf } from './varied-pods.js';
import { waitFor } from './wait-for.js';

// The rbac-syncer's pod watch on the oldest Kubernetes the install supports, a real kube-apiserver of
// that minor (tools/kube/floor; deploy/tests/kubernetes-floor.e2e.ts holds it to MINIMUM_KUBERNETES): its WatchList feature gate is off, so a
// streaming list is refused there and the reflector lists in pages; and the protobuf reader, whose
// schema is the pinned Kubernetes', rebuilds exactly the JSON that older API server sends.
let cp: ControlPlane;
let client: KubeClient;

beforeAll(async () => {
  // The cold build of the floor's kube-apiserver takes minutes (tools/prebuild.sh starts it early).
  cp = await startControlPlane({ kubeApiServer: await floorApiServer() });
  client = loadKubeClient(cp.kubeconfigPath);
}, 900_000);

afterAll(async () => {
  await cp?.stop();
});

/**
 * `value` without the `creationTimestamp: null` that this API server's JSON gives object metadata
 * embedded in a spec (a zero time; the pinned one leaves it out, as protobuf does, which carries no
 * zero time); where each was is added to `found`. Nothing Outrigger projects reads it.
 */
function withoutNullCreationTimestamps(value: unknown, at: string, found: string[]): unknown {
  if (Array.isArray(value)) return value.map((item) => withoutNullCreationTimestamps(item, `${at}[]`, found));
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value).flatMap(([key, item]) => {
      if (key === 'creationTimestamp' && item === null) return found.push(at), [];
      return [[key, withoutNullCreationTimestamps(item, `${at}.${key}`, found)]];
    }),
  );
}

describe('the Kubernetes client on the oldest supported Kubernetes', () => {
  it("runs against the floor's kube-apiserver, older than the pinned one", () => {
    const minor = (version: string) => Number(/^v1\.(\d+)\./.exec(version)?.[1]);
    expect(minor(cp.version)).toBeLessThan(minor(inject('controlPlane').version));
  });

  it('decodes each fixture pod in protobuf to the JSON the API server answers for it', async () => {
    const { namespace, release } = await createVariedPods(kubeConfigFrom(cp.kubeconfigPath), client);
    try {
      const pods = await podsInJsonAndProtobuf(client, namespace);
      expect(pods.map((pod) => pod.name)).toEqual(['kitchen-sink', 'minimal', 'probes-by-number']);
      const nulls: string[] = [];
      for (const { name, json, contentType, bytes } of pods) {
        expect(contentType).toBe(KUBE_PROTOBUF);
        expect(decodeKubeObject(KUBE_PROTOBUF_SCHEMA, bytes), name).toStrictEqual(withoutNullCreationTimestamps(json, `${name}:`, nulls));
      }
      // The one difference, where the fixtures embed object metadata: the ephemeral volume's claim template.
      expect(nulls).toEqual(['kitchen-sink:.spec.volumes[].ephemeral.volumeClaimTemplate.metadata']);
    } finally {
      await release();
    }
  });

  it('a streaming list in protobuf, as the rbac-syncer watches pods: refused, said once, listed in pages, then followed', async () => {
    const { namespace, release } = await createVariedPods(kubeConfigFrom(cp.kubeconfigPath), client);
    let done = false;
    const released = async () => {
      if (!done) await release();
      done = true;
    };
    try {
      const path = resourcePath({ apiVersion: 'v1', resource: 'pods', namespace });
      const errors: string[] = [];
      const names = (pods: Reflector<string>) => pods.entries().map(([, name]) => name).sort();
      const pods = new Reflector<string>(client, {
        path,
        project: (pod) => pod.metadata?.name,
        streamingList: true,
        protobuf: KUBE_PROTOBUF_SCHEMA,
        pageSize: 1,
        backoff: { baseMs: 100, maxMs: 1_000 },
        onError: (_, info) => errors.push(info.message),
      }).start();
      try {
        await pods.whenSynced();
        expect(names(pods)).toEqual(['kitchen-sink', 'minimal', 'probes-by-number']);
        expect(errors).toEqual([expect.stringMatching(new RegExp(`^the API server refused a streaming list of ${path} \\(.*\\); listing in pages from now on$`))]);
        await released();
        await waitFor('the deleted pod to leave the view', () => !names(pods).includes('kitchen-sink'));
        expect(names(pods)).toEqual(['minimal', 'probes-by-number']);
        expect(pods.status()).toMatchObject({ hasSynced: true, viewComplete: true });
      } finally {
        await pods.stop();
      }
    } finally {
      await released();
    }
  });
});
