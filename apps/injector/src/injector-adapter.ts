import { FastifyAdapter } from '@nestjs/platform-fastify';

export interface InjectorAdapterOptions {
  readonly bodyLimitBytes: number;
  readonly cert: string;
  readonly key: string;
  /** With a client CA, every caller is asked for a certificate (see MutateRoute). */
  readonly clientCa?: string;
}

/** The injector's HTTPS server. */
export function injectorAdapter(options: InjectorAdapterOptions): FastifyAdapter {
  return new FastifyAdapter({
    logger: false,
    bodyLimit: options.bodyLimitBytes,
    // Fastify's default answers 503 to a request that arrives on a kept-alive connection once close
    // has begun; for the API server that is a failed pod create. Answer it (with Connection: close).
    return503OnClosing: false,
    // With a client CA, /mutate refuses callers without a valid certificate, while kubelet probes
    // (which have none) still reach /healthz and /readyz. Once the app runs, each handshake presents
    // what the certificate source answers (tls/https-handshake.ts).
    https: { cert: options.cert, key: options.key, ...(options.clientCa ? { ca: options.clientCa, requestCert: true, rejectUnauthorized: false } : {}) },
  });
}
