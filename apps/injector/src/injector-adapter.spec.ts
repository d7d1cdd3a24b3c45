import type { AddressInfo } from 'node:net';
import { Agent, request } from 'node:https';
import { issueCertificate } from '@outrigger/pki';
import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { injectorAdapter } from './injector-adapter.js';

const ca = issueCertificate({ commonName: 'ca', usage: 'ca', lifetimeMs: 3_600_000 });
const leaf = issueCertificate({ commonName: 'injector', usage: 'server', issuer: ca, dnsNames: ['localhost'], lifetimeMs: 3_600_000 });

function post(port: number, agent: Agent): Promise<{ status: number | undefined; connection: string | undefined }> {
  return new Promise((done, fail) => {
    const req = request({ host: '127.0.0.1', port, path: '/mutate', method: 'POST', agent, ca: ca.cert, servername: 'localhost', headers: { 'content-type': 'application/json' } }, (res) => {
      res.resume();
      res.on('end', () => done({ status: res.statusCode, connection: res.headers.connection }));
    });
    req.on('error', fail);
    req.end('{}');
  });
}

describe('injectorAdapter', () => {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  afterEach(() => agent.destroy());

  it('answers a review that arrives on a kept-alive connection while the server closes, asking to close it', async () => {
    const server: FastifyInstance = injectorAdapter({ bodyLimitBytes: 1024, cert: leaf.cert, key: leaf.key }).getInstance();
    server.post('/mutate', async () => ({ ok: true }));
    let duringClose: Promise<{ status: number | undefined; connection: string | undefined }> | undefined;
    // Close has begun (routes marked closing) but the kept-alive connection is still open: the API
    // server may write its next review on it now.
    server.addHook('preClose', async () => {
      duringClose = post(port, agent);
      await duringClose;
    });
    await server.listen({ port: 0, host: '127.0.0.1' });
    const port = (server.server.address() as AddressInfo).port;

    expect(await post(port, agent)).toEqual({ status: 200, connection: 'keep-alive' });
    await server.close();
    expect(await duringClose).toEqual({ status: 200, connection: 'close' });
  });
});
