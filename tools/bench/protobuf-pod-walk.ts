import { request } from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';
import { getOptions, INITIAL_EVENTS_END, WATCH_LIST } from './list-floor.js';
import { eachField as each } from './protobuf-wire.js';

// What reading the pods in protobuf would cost the rbac-syncer: the WatchList the syncer reads,
// asked for in protobuf, with each pod walked by a minimal decoder that materialises only what the
// syncer reads (the pod's identity, annotations and ServiceAccount, every container's name, the
// agent container's fields). A measure of the lever, not a decoder the syncer could use: fields
// are found by their numbers in k8s.io/api's generated.proto, and the agent's nested messages are
// kept as bytes.

export interface ProtobufWalk {
  ms: number;
  bytes: number;
  pods: number;
  /** namespace/ServiceAccount of the pods that carry the agent container, not being deleted. */
  subjects: number;
}

// Field numbers of k8s.io/api/core/v1 and k8s.io/apimachinery generated.proto.
const WATCH_EVENT = { type: 1, object: 2 } as const;
const RAW_EXTENSION_RAW = 1;
const UNKNOWN_RAW = 2;
const POD = { metadata: 1, spec: 2 } as const;
const META = { name: 1, namespace: 3, uid: 5, resourceVersion: 6, deletionTimestamp: 9, annotations: 12 } as const;
const SPEC = { containers: 2, serviceAccountName: 8, initContainers: 20 } as const;
const CONTAINER_STRINGS = new Set([1, 2, 5, 13, 14]); // name, image, workingDir, terminationMessagePath, imagePullPolicy
const CONTAINER_STRING_LISTS = new Set([3, 4]); // command, args
const decoder = new TextDecoder();

export async function walkProtobufPods(kc: KubeConfig, agentContainer: string): Promise<ProtobufWalk> {
  const options = await getOptions(kc, WATCH_LIST, 'application/vnd.kubernetes.protobuf;stream=watch');
  const started = performance.now();
  const subjects = new Set<string>();
  let pods = 0;
  let bytes = 0;
  await new Promise<void>((resolve, reject) => {
    const req = request(options, (res) => {
      if (res.statusCode !== 200) reject(new Error(`GET ${WATCH_LIST} answered ${res.statusCode}`));
      let pending: Buffer = Buffer.alloc(0);
      res.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        pending = pending.length > 0 ? Buffer.concat([pending, chunk]) : chunk;
        let at = 0;
        // Frames: a 4-byte big-endian length, then a WatchEvent.
        while (pending.length - at >= 4 && pending.length - at - 4 >= pending.readUInt32BE(at)) {
          const end = at + 4 + pending.readUInt32BE(at);
          const event = watchEvent(pending, at + 4, end);
          at = end;
          if (event.type === 'BOOKMARK') {
            if (!pending.subarray(event.start, event.end).includes(INITIAL_EVENTS_END)) continue;
            req.destroy();
            return resolve();
          }
          pods++;
          const pod = walkPod(pending, event.start, event.end, agentContainer);
          if (pod.agent && !pod.deleting) subjects.add(`${pod.namespace}/${pod.serviceAccount}`);
        }
        pending = pending.subarray(at);
      });
      res.on('error', reject);
    });
    req.on('error', (err) => (req.destroyed ? undefined : reject(err)));
    req.end();
  });
  return { ms: performance.now() - started, bytes, pods, subjects: subjects.size };
}

/** The event's type, and where its object's own message lies (inside RawExtension and the `k8s\0` Unknown envelope). */
function watchEvent(b: Buffer, from: number, to: number): { type: string; start: number; end: number } {
  let type = '';
  let start = 0;
  let end = 0;
  each(b, from, to, (field, s, e) => {
    if (field === WATCH_EVENT.type) type = text(b, s, e);
    else if (field === WATCH_EVENT.object)
      each(b, s, e, (f, s2, e2) => {
        if (f === RAW_EXTENSION_RAW)
          each(b, s2 + 4, e2, (g, s3, e3) => {
            if (g === UNKNOWN_RAW) [start, end] = [s3, e3];
          });
      });
  });
  return { type, start, end };
}

function walkPod(b: Buffer, from: number, to: number, agentContainer: string) {
  const pod = { name: '', namespace: '', uid: '', resourceVersion: '', deleting: false, annotations: {} as Record<string, string>, serviceAccount: '', agent: undefined as Record<number, unknown> | undefined };
  each(b, from, to, (field, s, e) => {
    if (field === POD.metadata)
      each(b, s, e, (f, s2, e2) => {
        if (f === META.name) pod.name = text(b, s2, e2);
        else if (f === META.namespace) pod.namespace = text(b, s2, e2);
        else if (f === META.uid) pod.uid = text(b, s2, e2);
        else if (f === META.resourceVersion) pod.resourceVersion = text(b, s2, e2);
        else if (f === META.deletionTimestamp) pod.deleting = true;
        else if (f === META.annotations) {
          const entry = ['', ''];
          each(b, s2, e2, (g, s3, e3) => (entry[g - 1] = text(b, s3, e3)));
          pod.annotations[entry[0] ?? ''] = entry[1] ?? '';
        }
      });
    else if (field === POD.spec)
      each(b, s, e, (f, s2, e2) => {
        if (f === SPEC.serviceAccountName) pod.serviceAccount = text(b, s2, e2);
        else if (f === SPEC.containers || f === SPEC.initContainers) {
          const container: Record<number, unknown> = {};
          each(b, s2, e2, (g, s3, e3) => {
            if (CONTAINER_STRINGS.has(g)) container[g] = text(b, s3, e3);
            else ((container[g] ??= []) as unknown[]).push(CONTAINER_STRING_LISTS.has(g) ? text(b, s3, e3) : b.subarray(s3, e3));
          });
          if (container[1] === agentContainer) pod.agent = container;
        }
      });
  });
  return pod;
}

function text(b: Buffer, start: number, end: number): string {
  return decoder.decode(b.subarray(start, end));
}
