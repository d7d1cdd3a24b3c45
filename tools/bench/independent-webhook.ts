/**
 * An independent sidecar-injecting webhook for the pod-create bench: plain node:https and its own
 * few lines of injection, none of Outrigger's code (Node runs this file as it is, stripping its
 * types). It adds what its injection file says (containers, volumes, annotations, pod spec fields)
 * to every pod it is asked about that does not have the first of those containers yet.
 *
 *   node tools/bench/independent-webhook.ts <port> <cert file> <key file> <injection file>
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:https';
import { fileURLToPath } from 'node:url';

/** What the webhook adds to a pod; the bench writes it from the injector's own answer (or a minimal container). */
export interface Injection {
  readonly containers: readonly { readonly name: string }[];
  readonly volumes?: readonly object[];
  readonly annotations?: Readonly<Record<string, string>>;
  /** Pod spec fields set as given (e.g. automountServiceAccountToken). */
  readonly spec?: Readonly<Record<string, unknown>>;
  /** Take the ServiceAccount plugin's token volume (kube-api-access-<random>) and its mounts away: only the agent gets a token. */
  readonly dropServiceAccountToken?: boolean;
}

export interface Pod {
  readonly metadata?: { readonly annotations?: Readonly<Record<string, string>> };
  readonly spec?: { readonly containers?: readonly { readonly name: string; readonly volumeMounts?: readonly { readonly name: string }[] }[]; readonly volumes?: readonly { readonly name: string }[] };
}

type Op = { op: 'add'; path: string; value: unknown } | { op: 'remove'; path: string };

const pointer = (key: string) => key.replace(/~/g, '~0').replace(/\//g, '~1');

/** The JSON patch that adds `injection` to `pod`; none when its first container is there already (reinvocation). */
export function injectionPatch(pod: Pod, injection: Injection): Op[] {
  const containers = pod.spec?.containers ?? [];
  if (containers.some((c) => c.name === injection.containers[0]?.name)) return [];
  const ops: Op[] = [];
  const token = injection.dropServiceAccountToken ? (pod.spec?.volumes ?? []).findIndex((v) => v.name.startsWith('kube-api-access-')) : -1;
  if (token >= 0) {
    const name = pod.spec?.volumes?.[token]?.name;
    containers.forEach((c, i) => {
      // From the last, so that the earlier indices stay right.
      const mounts = (c.volumeMounts ?? []).map((m, j) => (m.name === name ? j : -1)).filter((j) => j >= 0).reverse();
      ops.push(...mounts.map((j) => ({ op: 'remove' as const, path: `/spec/containers/${i}/volumeMounts/${j}` })));
    });
    ops.push({ op: 'remove', path: `/spec/volumes/${token}` });
  }
  ops.push(...injection.containers.map((value) => ({ op: 'add' as const, path: '/spec/containers/-', value })));
  const volumes = injection.volumes ?? [];
  if (volumes.length > 0) {
    if (pod.spec?.volumes) ops.push(...volumes.map((value) => ({ op: 'add' as const, path: '/spec/volumes/-', value })));
    else ops.push({ op: 'add', path: '/spec/volumes', value: volumes });
  }
  for (const [field, value] of Object.entries(injection.spec ?? {})) ops.push({ op: 'add', path: `/spec/${pointer(field)}`, value });
  const annotations = Object.entries(injection.annotations ?? {});
  if (annotations.length > 0) {
    if (pod.metadata?.annotations) ops.push(...annotations.map(([key, value]) => ({ op: 'add' as const, path: `/metadata/annotations/${pointer(key)}`, value })));
    else ops.push({ op: 'add', path: '/metadata/annotations', value: Object.fromEntries(annotations) });
  }
  return ops;
}

/** The reply to one request body: the AdmissionReview answer's JSON, or undefined for a body that is not JSON. */
export function answerReview(body: Buffer, injection: Injection): string | undefined {
  let review: { apiVersion?: string; request?: { uid?: string; object?: Pod } };
  try {
    review = JSON.parse(body.toString('utf8')) as typeof review;
  } catch {
    return undefined;
  }
  const ops = injectionPatch(review.request?.object ?? {}, injection);
  const response = { uid: review.request?.uid, allowed: true, ...(ops.length > 0 ? { patchType: 'JSONPatch', patch: Buffer.from(JSON.stringify(ops)).toString('base64') } : {}) };
  return JSON.stringify({ apiVersion: review.apiVersion, kind: 'AdmissionReview', response });
}

function serve(port: number, cert: string, key: string, injection: Injection): void {
  const server = createServer({ cert, key }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const reply = answerReview(Buffer.concat(chunks), injection);
      if (reply === undefined) res.writeHead(400).end();
      else res.writeHead(200, { 'content-type': 'application/json' }).end(reply);
    });
  });
  // Longer than the API server's idle connections, as the injector's.
  server.keepAliveTimeout = 72_000;
  server.listen(port, '127.0.0.1', () => console.log('listening'));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [port, certFile, keyFile, injectionFile] = process.argv.slice(2) as [string, string, string, string];
  serve(Number(port), readFileSync(certFile, 'utf8'), readFileSync(keyFile, 'utf8'), JSON.parse(readFileSync(injectionFile, 'utf8')) as Injection);
  // An orderly exit on the bench's stop, so that --cpu-prof writes its profile.
  process.once('SIGTERM', () => process.exit(0));
}
