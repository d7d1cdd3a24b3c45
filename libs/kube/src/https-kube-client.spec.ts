import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { getEventListeners } from 'node:events';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { classifyApiError } from './api-error.js';
import { HttpsKubeClient } from './https-kube-client.js';
import { kubeJson } from './kube-request.js';

interface Seen {
  method?: string;
  url?: string;
  headers: IncomingHttpHeaders;
  body: string;
}

// A loopback stand-in for the API server that echoes what it received; `/slow` never answers,
// `/watch` streams two lines, `/missing` is a 404 Status.
describe('HttpsKubeClient', () => {
  let server: Server;
  let base: string;
  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        if (req.url?.startsWith('/slow-watch')) return void res.writeHead(200).flushHeaders();
        if (req.url?.startsWith('/slow')) return;
        if (req.url?.startsWith('/watch')) {
          res.write('{"type":"ADDED"}\n');
          return void setTimeout(() => res.end('{"type":"DELETED"}\n'), 20);
        }
        if (req.url?.startsWith('/missing')) {
          res.writeHead(404, { 'content-type': 'application/json' });
          return void res.end(JSON.stringify({ kind: 'Status', code: 404, reason: 'NotFound', message: 'pods "x" not found' }));
        }
        const seen: Seen = { method: req.method, url: req.url, headers: req.headers, body };
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(seen));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  });
  afterAll(() => {
    server.closeAllConnections();
    server.close();
  });

  it('sends method, path, query and a JSON body with its length in bytes (ü is two)', async () => {
    const client = new HttpsKubeClient({ server: base });
    expect(client.server).toBe(base.slice(0, -1));
    const seen = await kubeJson<Seen>(client, {
      method: 'PATCH',
      path: '/api/v1/namespaces/a/configmaps/b',
      query: { fieldManager: 'me', force: true, dryRun: undefined },
      contentType: 'application/apply-patch+yaml',
      body: { data: { k: 'ü' } },
    });
    expect(seen).toMatchObject({ method: 'PATCH', url: '/api/v1/namespaces/a/configmaps/b?fieldManager=me&force=true', body: '{"data":{"k":"ü"}}' });
    expect(seen.headers).toMatchObject({ 'content-type': 'application/apply-patch+yaml', 'content-length': '19', accept: 'application/json' });
  });

  it('authenticates with a token, or basic credentials, and impersonates', async () => {
    const token = await kubeJson<Seen>(new HttpsKubeClient({ server: base, token: 'abc', username: 'ignored' }), { path: '/' });
    expect(token.headers.authorization).toBe('Bearer abc');
    const basic = await kubeJson<Seen>(new HttpsKubeClient({ server: base, username: 'u', password: 'p' }), { path: '/' });
    expect(basic.headers.authorization).toBe(`Basic ${Buffer.from('u:p').toString('base64')}`);
    const as = await kubeJson<Seen>(new HttpsKubeClient({ server: base, impersonate: { user: 'system:serviceaccount:a:b', groups: ['g1', 'g2'] } }), {
      path: '/',
    });
    expect(as.headers).toMatchObject({ 'impersonate-user': 'system:serviceaccount:a:b', 'impersonate-group': 'g1, g2' });
    expect(as.headers.authorization).toBeUndefined();
  });

  it('re-reads a token file after a minute and keeps the last token while the file is away', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'token-'));
    const file = join(dir, 'token');
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      writeFileSync(file, 'first\n');
      const client = new HttpsKubeClient({ server: base, tokenFile: file });
      const auth = async () => (await kubeJson<Seen>(client, { path: '/' })).headers.authorization;
      expect(await auth()).toBe('Bearer first');
      writeFileSync(file, 'second\n');
      expect(await auth()).toBe('Bearer first');
      vi.advanceTimersByTime(60_000);
      expect(await auth()).toBe('Bearer second');
      rmSync(file);
      vi.advanceTimersByTime(60_000);
      expect(await auth()).toBe('Bearer second');
      await expect(kubeJson(new HttpsKubeClient({ server: base, tokenFile: file }), { path: '/' })).rejects.toThrow(/cannot read the token file/);
    } finally {
      vi.useRealTimers();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('turns an error status into a classified error with the Status message', async () => {
    const error = await kubeJson(new HttpsKubeClient({ server: base }), { path: '/missing' }).catch((e: unknown) => e);
    expect(classifyApiError(error)).toMatchObject({ kind: 'notFound', message: 'HTTP 404 NotFound: pods "x" not found' });
  });

  it('aborts a request that outlives its timeout, as an abort', async () => {
    const error = await kubeJson(new HttpsKubeClient({ server: base }), { path: '/slow', timeoutMs: 50 }).catch((e: unknown) => e);
    expect(classifyApiError(error)).toMatchObject({ kind: 'aborted', retryable: true });
  });

  it('streams a response as it arrives', async () => {
    const response = await new HttpsKubeClient({ server: base }).request({ path: '/watch' });
    const text: string[] = [];
    for await (const chunk of response.body.stream()) text.push(Buffer.from(chunk).toString());
    expect(text.join('')).toBe('{"type":"ADDED"}\n{"type":"DELETED"}\n');
  });

  it('ends a body being streamed with an abort when the signal fires, and leaves no listener on the signal', async () => {
    const stop = new AbortController();
    const client = new HttpsKubeClient({ server: base });
    for (let i = 0; i < 20; i++) await kubeJson(client, { path: '/', signal: stop.signal });
    expect(getEventListeners(stop.signal, 'abort')).toHaveLength(0);
    const response = await client.request({ path: '/slow-watch', signal: stop.signal });
    const reader = response.body.stream().getReader();
    const reading = reader.read().catch((e: unknown) => e);
    stop.abort();
    expect(classifyApiError(await reading).kind).toBe('aborted');
  });

  it('reports a refused connection as retryable', async () => {
    const error = await kubeJson(new HttpsKubeClient({ server: 'http://127.0.0.1:1' }), { path: '/' }).catch((e: unknown) => e);
    expect(classifyApiError(error)).toMatchObject({ kind: 'retryable', retryable: true });
  });
});
