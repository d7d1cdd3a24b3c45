import { request, type RequestOptions } from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';
import { firstField } from './protobuf-wire.js';

// The API server's own floor for "read every pod once": every pod sent and thrown away unread, so
// the time is the API server's (and the socket's), none of any client's decoding or bookkeeping.

export type ListEncoding = 'json' | 'protobuf';
export type ListMode = 'pages' | 'stream';
export interface ListFloor {
  ms: number;
  bytes: number;
}

const ACCEPT: Record<ListEncoding, string> = { json: 'application/json', protobuf: 'application/vnd.kubernetes.protobuf' };
// The bookmark that ends a WatchList's initial events carries this annotation, in either encoding.
export const INITIAL_EVENTS_END = Buffer.from('k8s.io/initial-events-end');
export const WATCH_LIST = '/api/v1/pods?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true';
const PAGE_SIZE = 500;

export async function listFloor(kc: KubeConfig, encoding: ListEncoding, mode: ListMode): Promise<ListFloor> {
  const started = performance.now();
  let bytes = 0;
  if (mode === 'stream') {
    bytes = await get(kc, WATCH_LIST, encoding, 'until-initial-events-end').then((r) => r.bytes);
  } else {
    let token: string | undefined;
    do {
      const page = await get(kc, `/api/v1/pods?limit=${PAGE_SIZE}${token ? `&continue=${encodeURIComponent(token)}` : ''}`, encoding, 'whole');
      bytes += page.bytes;
      token = encoding === 'json' ? jsonContinue(page.head) : protobufContinue(page.head);
    } while (token);
  }
  return { ms: performance.now() - started, bytes };
}

/** A GET of `path` on the kubeconfig's API server, with its credentials. */
export async function getOptions(kc: KubeConfig, path: string, accept: string): Promise<RequestOptions> {
  const server = new URL(kc.getCurrentCluster()?.server ?? '');
  const options: RequestOptions = { method: 'GET', host: server.hostname, port: server.port, path, headers: { accept } };
  await kc.applyToHTTPSOptions(options);
  return options;
}

interface Response {
  bytes: number;
  /** The answer's first bytes: where the list's metadata (and its continue token) is. */
  head: Buffer;
}

async function get(kc: KubeConfig, path: string, encoding: ListEncoding, until: 'whole' | 'until-initial-events-end'): Promise<Response> {
  const options = await getOptions(kc, path, ACCEPT[encoding]);
  return new Promise((resolve, reject) => {
    const req = request(options, (res) => {
      if (res.statusCode !== 200) reject(new Error(`GET ${path} answered ${res.statusCode}`));
      let bytes = 0;
      let head: Buffer = Buffer.alloc(0);
      let tail: Buffer = Buffer.alloc(0);
      res.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        if (head.length < 4096) head = Buffer.concat([head, chunk]).subarray(0, 4096);
        if (until === 'whole') return;
        // The marker may straddle two chunks: search the previous chunk's end with this one.
        if (Buffer.concat([tail, chunk]).includes(INITIAL_EVENTS_END)) {
          resolve({ bytes, head });
          req.destroy();
        }
        tail = chunk.subarray(Math.max(0, chunk.length - INITIAL_EVENTS_END.length));
      });
      res.on('end', () => resolve({ bytes, head }));
      res.on('error', reject);
    });
    req.on('error', (err) => (req.destroyed ? undefined : reject(err)));
    req.end();
  });
}

// The API server writes a list's metadata before its items, so the token is in the first bytes;
// parsing the whole page would put a client's decoding back into the floor.
function jsonContinue(head: Buffer): string | undefined {
  return /"continue":"([^"]+)"/.exec(head.toString('latin1'))?.[1];
}

/** The continue token of a protobuf list: envelope `k8s\0` + Unknown{raw: 2} → PodList{metadata: 1} → ListMeta{continue: 3}. */
function protobufContinue(head: Buffer): string | undefined {
  const raw = firstField(head.subarray(4), 2);
  const meta = raw && firstField(raw, 1);
  const token = meta && firstField(meta, 3);
  return token?.length ? token.toString('utf8') : undefined;
}
