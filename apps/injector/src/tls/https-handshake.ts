import { readFileSync } from 'node:fs';
import type { SecureContextOptions, Server } from 'node:tls';
import { Inject, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { injectorConfig, type InjectorConfig } from '../config/injector.config.js';
import { InjectorMetrics } from '../metrics/injector.metrics.js';
import type { CertificateSource } from './certificate-source.js';
import { ServingCertificateSource } from './serving-certificate.source.js';
import { type ServingPair, secureContextOptions } from './serving-pair.js';

/**
 * Makes `server` ask `source` for the pair before every TLS handshake, and present what it answers.
 * setSecureContext before each connection rather than SNICallback: Node calls SNICallback only when
 * the client sends SNI, and clients that dial an IP (kube-apiserver with a URL webhook, probes) send none.
 * `contextOptions` turns a new pair into the context's options; when it throws, the previous context stays.
 */
export function askBeforeEachHandshake(
  server: Server,
  source: CertificateSource,
  contextOptions: (pair: ServingPair) => SecureContextOptions,
  onError: (pair: ServingPair, error: Error) => void,
): () => void {
  let applied: ServingPair | undefined;
  const beforeHandshake = () => {
    const pair = source.current();
    if (!pair || pair === applied) return;
    applied = pair;
    try {
      server.setSecureContext(contextOptions(pair));
    } catch (error) {
      onError(pair, error as Error);
    }
  };
  // Before the TLS listener that starts the handshake with the server's context.
  server.prependListener('connection', beforeHandshake);
  return () => server.off('connection', beforeHandshake);
}

/** The injector's HTTPS server presents what ServingCertificateSource answers, handshake by handshake. */
@Injectable()
export class HttpsHandshakeCertificates implements OnApplicationBootstrap {
  private readonly logger = new Logger(HttpsHandshakeCertificates.name);

  constructor(
    @Inject(injectorConfig.KEY) private readonly config: InjectorConfig,
    private readonly adapterHost: HttpAdapterHost,
    private readonly source: ServingCertificateSource,
    private readonly metrics: InjectorMetrics,
  ) {}

  onApplicationBootstrap(): void {
    const server = this.adapterHost.httpAdapter.getHttpServer() as Server;
    askBeforeEachHandshake(
      server,
      this.source,
      // The client CA file is read again with each new pair, as when the certificate was pushed.
      (pair) => secureContextOptions(pair, this.config.tls.clientCaFile ? readFileSync(this.config.tls.clientCaFile, 'utf8') : undefined),
      (pair, error) => {
        this.metrics.certificateReloads.inc({ result: 'failure' });
        this.logger.warn(`could not present the certificate from ${pair.source}: ${error.message}; keeping the current one`);
      },
    );
  }
}
