import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { Server as TlsServer } from 'node:tls';
import type { FastifyInstance } from 'fastify';

/**
 * Ends, when the server closes, the connections on which no request has begun. Over TLS, Node's
 * close() reaps idle kept-alive connections but not these (nodejs/node#63452), and the API
 * server's Go client dials such connections ahead of need: a terminating service would wait for
 * them until the kubelet's SIGKILL. Ended with close_notify and FIN, the client drops them before
 * writing on them.
 */
export function endPreRequestConnectionsOnClose(fastify: FastifyInstance): void {
  const server = fastify.server;
  const waiting = new Set<Socket>();
  let closing = false;
  // The event on which the HTTP layer takes a connection: after the handshake, for HTTPS.
  server.on(server instanceof TlsServer ? 'secureConnection' : 'connection', (socket: Socket) => {
    if (closing) return void socket.end();
    waiting.add(socket);
    socket.once('close', () => waiting.delete(socket));
  });
  server.on('request', (request: IncomingMessage) => waiting.delete(request.socket));
  // preClose runs after the routes close and just before server.close() stops accepting.
  fastify.addHook('preClose', (done) => {
    closing = true;
    for (const socket of waiting) socket.end();
    waiting.clear();
    done();
  });
}
