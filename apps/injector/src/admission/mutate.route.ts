import type { TLSSocket } from 'node:tls';
import { type BeforeApplicationShutdown, Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { FastifyAdapter } from '@nestjs/platform-fastify';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { injectorConfig, type InjectorConfig } from '../config/injector.config.js';
import { AdmissionService } from './admission.service.js';

/**
 * POST /mutate, the API server's hot path, is a plain Fastify route: Nest's router (parameter
 * resolution, promise hops, response mapping) cost about 8 % of a request's CPU, which the
 * throughput target cannot spare (tools/bench/injector-bench.ts). DI, lifecycle and config stay Nest.
 * Error bodies keep the shape of Nest's HTTP exceptions.
 */
/** How long a terminating injector keeps answering, with `Connection: close`, before its server closes. */
export const DRAIN_MS = 5_000;

@Injectable()
export class MutateRoute implements OnModuleInit, BeforeApplicationShutdown {
  private draining = false;

  constructor(
    private readonly adapterHost: HttpAdapterHost<FastifyAdapter>,
    private readonly admission: AdmissionService,
    @Inject(injectorConfig.KEY) private readonly config: InjectorConfig,
  ) {}

  // Nest calls this after its own routes and before listen, while Fastify still takes plugins.
  onModuleInit(): void {
    // In a scope of its own, the body stays raw bytes: review() parses it, so every malformed input
    // gets a precise 400, and no other route is affected.
    void this.adapterHost.httpAdapter.getInstance().register(async (scope) => {
      scope.removeAllContentTypeParsers();
      scope.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
      // Before the body is read: a caller without the client certificate costs no reading of megabytes.
      scope.addHook('onRequest', async (request, reply) => {
        if (this.config.tls.clientCaFile && !(request.raw.socket as TLSSocket).authorized) {
          refuse(reply, 403, 'Forbidden', 'a client certificate signed by the configured client CA is required');
          return reply;
        }
        return undefined;
      });
      scope.post('/mutate', (request, reply) => this.mutate(request, reply));
    });
  }

  /**
   * The API server pools its webhook connections per Service host, not per endpoint: after this pod
   * left the endpoints it may still send reviews over a connection it holds. Closing such an idle
   * connection races with a review being written on it (a failed pod create under failurePolicy
   * Fail), so first answer over every connection once more with `Connection: close`, which the
   * client retires cleanly, and only then let the server close.
   */
  async beforeApplicationShutdown(): Promise<void> {
    this.draining = true;
    await new Promise((done) => setTimeout(done, DRAIN_MS));
  }

  mutate(request: FastifyRequest, reply: FastifyReply): void {
    if (this.draining) void reply.header('connection', 'close');
    const result = this.admission.review(request.headers['content-type'], request.body);
    if (!result.ok) return refuse(reply, 400, 'Bad Request', result.error);
    void reply.type('application/json; charset=utf-8').send(JSON.stringify(result.value));
  }
}

function refuse(reply: FastifyReply, statusCode: number, error: string, message: string): void {
  void reply.code(statusCode).send({ statusCode, message, error });
}
