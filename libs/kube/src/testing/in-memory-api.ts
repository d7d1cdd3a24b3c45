import type { KubeObject } from '../kube-object.js';
import type { KubeClient, KubeRequest, KubeResponse } from '../kube-request.js';

/**
 * Test-only: an API server in memory, enough for the toolkit's unit tests. Objects live by their
 * path (`/api/v1/namespaces/ns/pods/name`); GET of a collection lists (with a metadata.name field
 * selector), `watch=true` streams later changes, POST creates, PUT replaces (409 on a stale
 * resourceVersion), DELETE removes. Every request is recorded. `fail` makes the next N requests
 * to a path answer 500. A watch with sendInitialEvents first streams the collection as ADDED events
 * and the bookmark that ends them, or answers 422 while `watchList` is false (the gate off).
 */
export class InMemoryApi implements KubeClient {
  readonly server = 'https://in-memory.test';
  readonly requests: string[] = [];
  private readonly objects = new Map<string, KubeObject>();
  private readonly watchers = new Set<{ collection: string; name?: string; push: (line: string) => void }>();
  private readonly failures = new Map<string, number>();
  private revision = 1;
  /** Whether watches honour sendInitialEvents, as with the WatchList feature gate on. */
  watchList = true;

  /** Creates or replaces an object at `collection/name` and tells the watchers. */
  put(collection: string, obj: KubeObject): KubeObject {
    const name = obj.metadata?.name ?? '';
    const path = `${collection}/${name}`;
    const existed = this.objects.has(path);
    const stored = { ...obj, metadata: { ...obj.metadata, resourceVersion: String(++this.revision) } };
    this.objects.set(path, stored);
    this.notify(collection, existed ? 'MODIFIED' : 'ADDED', stored);
    return stored;
  }

  remove(collection: string, name: string): void {
    const path = `${collection}/${name}`;
    const obj = this.objects.get(path);
    if (!obj) return;
    this.objects.delete(path);
    this.notify(collection, 'DELETED', { ...obj, metadata: { ...obj.metadata, resourceVersion: String(++this.revision) } });
  }

  get(path: string): KubeObject | undefined {
    return this.objects.get(path);
  }

  fail(path: string, times: number): void {
    this.failures.set(path, times);
  }

  /** Ends every open watch, as an API server going away does. */
  closeWatches(): void {
    this.watchers.forEach((w) => w.push(''));
  }

  async request(request: KubeRequest): Promise<KubeResponse> {
    const method = request.method ?? 'GET';
    this.requests.push(`${method} ${request.path}${request.query?.['watch'] ? ' (watch)' : ''}`);
    const failing = this.failures.get(request.path) ?? 0;
    if (failing > 0) {
      this.failures.set(request.path, failing - 1);
      return respond(500, { kind: 'Status', code: 500, message: 'injected failure' });
    }
    if (method === 'GET' && request.query?.['watch']) return this.watch(request);
    if (method === 'GET' && this.objects.has(request.path)) return respond(200, this.objects.get(request.path));
    if (method === 'GET' && this.isCollection(request.path)) return respond(200, this.list(request));
    if (method === 'GET') return respond(404, { kind: 'Status', code: 404, reason: 'NotFound', message: `${request.path} not found` });
    const body = (typeof request.body === 'string' ? JSON.parse(request.body) : request.body) as KubeObject;
    if (method === 'POST') {
      if (this.objects.has(`${request.path}/${body.metadata?.name}`)) return respond(409, { kind: 'Status', code: 409, reason: 'AlreadyExists' });
      return respond(201, this.put(request.path, body));
    }
    const collection = request.path.slice(0, request.path.lastIndexOf('/'));
    const current = this.objects.get(request.path);
    if (method === 'PUT') {
      if (!current) return respond(404, { kind: 'Status', code: 404, reason: 'NotFound' });
      if (body.metadata?.resourceVersion && body.metadata.resourceVersion !== current.metadata?.resourceVersion) return respond(409, { kind: 'Status', code: 409, reason: 'Conflict' });
      return respond(200, this.put(collection, body));
    }
    if (method === 'DELETE') {
      this.remove(collection, request.path.slice(request.path.lastIndexOf('/') + 1));
      return respond(200, { kind: 'Status', code: 200 });
    }
    return respond(405, { kind: 'Status', code: 405 });
  }

  /** `/api/v1/pods`, `/apis/g/v/namespaces/ns/leases`: a resource right after the version or a namespace. */
  private isCollection(path: string): boolean {
    const segments = path.split('/').filter(Boolean);
    const rest = segments.slice(segments[0] === 'api' ? 2 : 3);
    return rest.length === 1 || (rest.length === 3 && rest[0] === 'namespaces');
  }

  private list(request: KubeRequest): unknown {
    const name = /^metadata\.name=(.+)$/.exec(String(request.query?.['fieldSelector'] ?? ''))?.[1];
    const items = [...this.objects].filter(([p, o]) => p.slice(0, p.lastIndexOf('/')) === request.path && (!name || o.metadata?.name === name)).map(([, o]) => o);
    return { metadata: { resourceVersion: String(this.revision) }, items };
  }

  private watch(request: KubeRequest): KubeResponse {
    const initial = request.query?.['sendInitialEvents'] === true;
    if (initial && !this.watchList) return respond(422, { kind: 'Status', code: 422, reason: 'Invalid', message: 'sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled' });
    const encoder = new TextEncoder();
    let watcher: { collection: string; name?: string; push: (line: string) => void } | undefined;
    const name = /^metadata\.name=(.+)$/.exec(String(request.query?.['fieldSelector'] ?? ''))?.[1];
    const stream = new ReadableStream<Uint8Array>({
      start: (controller) => {
        watcher = {
          collection: request.path,
          ...(name ? { name } : {}),
          push: (line) => {
            if (line === '') {
              this.watchers.delete(watcher as never);
              controller.close();
            } else controller.enqueue(encoder.encode(`${line}\n`));
          },
        };
        this.watchers.add(watcher);
        if (initial) {
          const { items, metadata } = this.list(request) as { items: KubeObject[]; metadata: { resourceVersion: string } };
          for (const object of items) watcher.push(JSON.stringify({ type: 'ADDED', object }));
          const end = { kind: 'Pod', apiVersion: 'v1', metadata: { resourceVersion: metadata.resourceVersion, annotations: { 'k8s.io/initial-events-end': 'true' } } };
          watcher.push(JSON.stringify({ type: 'BOOKMARK', object: end }));
        }
        request.signal?.addEventListener('abort', () => {
          this.watchers.delete(watcher as never);
          controller.error(request.signal?.reason ?? new Error('aborted'));
        });
      },
      cancel: () => {
        this.watchers.delete(watcher as never);
      },
    });
    return { status: 200, headers: {}, body: { text: async () => '', stream: () => stream } };
  }

  private notify(collection: string, type: string, object: KubeObject): void {
    for (const watcher of this.watchers) {
      if (watcher.collection === collection && (!watcher.name || watcher.name === object.metadata?.name)) watcher.push(JSON.stringify({ type, object }));
    }
  }
}

function respond(status: number, body: unknown): KubeResponse {
  const text = JSON.stringify(body);
  return { status, headers: {}, body: { text: async () => text, stream: () => new Blob([text]).stream() } };
}
