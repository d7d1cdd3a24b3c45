import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { connect, type TLSSocket } from 'node:tls';
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { endPreRequestConnectionsOnClose } from './pre-request-connections.js';

// A self-signed pair for localhost, valid for a century: the gap is Node's HTTPS server's.
const cert = readFileSync(new URL('../fixtures/localhost.crt', import.meta.url), 'utf8');
const key = readFileSync(new URL('../fixtures/localhost.key', import.meta.url), 'utf8');

async function server(route: () => Promise<string>) {
  const fastify = Fastify({ https: { cert, key }, return503OnClosing: false });
  fastify.get('/', route);
  endPreRequestConnectionsOnClose(fastify);
  await fastify.listen({ port: 0, host: '127.0.0.1' });
  const { port } = fastify.server.address() as { port: number };
  // Resolves once the server has taken the connection (after the handshake).
  const open = async (): Promise<TLSSocket> => {
    const taken = once(fastify.server, 'secureConnection');
    const socket = connect({ port, host: '127.0.0.1', ca: cert, servername: 'localhost' });
    await Promise.all([once(socket, 'secureConnect'), taken]);
    return socket;
  };
  return { fastify, open };
}

describe('endPreRequestConnectionsOnClose', () => {
  // Without it, close() waits for the connection that sent nothing until the client drops it.
  it('ends a connection that has sent no request, and the server closes at once', { timeout: 10_000 }, async () => {
    const { fastify, open } = await server(async () => 'ok');
    const silent = await open();
    const ended = once(silent, 'end');
    await fastify.close();
    await ended;
    silent.destroy();
  });

  it('lets a request in progress finish, with its answer', { timeout: 10_000 }, async () => {
    let release: () => void = () => undefined;
    const released = new Promise<void>((r) => (release = r));
    const { fastify, open } = await server(async () => {
      await released;
      return 'done';
    });
    const busy = await open();
    let answer = '';
    busy.on('data', (chunk: Buffer) => (answer += chunk.toString()));
    const handled = once(fastify.server, 'request');
    busy.write('GET / HTTP/1.1\r\nHost: localhost\r\n\r\n');
    await handled;
    const ended = once(busy, 'end');
    const closed = fastify.close();
    release();
    await Promise.all([closed, ended]);
    expect(answer).toMatch(/^HTTP\/1\.1 200 .*done$/s);
    busy.destroy();
  });
});
