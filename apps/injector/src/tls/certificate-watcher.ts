import { readFileSync } from 'node:fs';
import type { Server } from 'node:https';
import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { injectorConfig, type InjectorConfig } from '../config/injector.config.js';
import { InjectorMetrics } from '../metrics/injector.metrics.js';
import { watchFiles } from './file-watch.js';
import { readServingCertificate, secureContextOptions, validateServingCertificate, type ServingCertificate } from './serving-certificate.js';

/**
 * Keeps the HTTPS server on the newest valid serving certificate without a restart (like
 * controller-runtime's certwatcher). Sources push candidates through `offer`; a candidate that does
 * not parse, does not match its key or has expired is refused and the current one stays; so is an
 * older one (the mounted file lags the Secret by up to a minute: it must not win back).
 */
@Injectable()
export class CertificateWatcher implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(CertificateWatcher.name);
  private current: ServingCertificate | undefined;
  private notAfter: Date | undefined;
  private notBefore: Date | undefined;
  private stopWatching: (() => void) | undefined;
  /** The last candidate looked at, good or bad: the same content is never judged (or logged) twice. */
  private lastSeen: string | undefined;

  constructor(
    @Inject(injectorConfig.KEY) private readonly config: InjectorConfig,
    private readonly metrics: InjectorMetrics,
    private readonly adapterHost: HttpAdapterHost,
  ) {}

  onApplicationBootstrap(): void {
    const { certFile, keyFile } = this.config.tls;
    this.offerFiles();
    this.stopWatching = watchFiles([certFile, keyFile], this.config.filePollMs, () => this.offerFiles());
  }

  onModuleDestroy(): void {
    this.stopWatching?.();
  }

  /** The certificate being served, and until when it is valid. */
  status(): { source: string; notAfter: Date } | undefined {
    return this.current && this.notAfter ? { source: this.current.source, notAfter: this.notAfter } : undefined;
  }

  /** Serves `candidate` from now on if it is valid and differs from the current one. */
  offer(candidate: ServingCertificate): boolean {
    const seen = `${candidate.cert}\n${candidate.key}`;
    if (seen === this.lastSeen) return false;
    this.lastSeen = seen;
    try {
      const x509 = validateServingCertificate(candidate);
      if (this.notBefore && new Date(x509.validFrom) < this.notBefore) return false;
      const server = this.adapterHost.httpAdapter.getHttpServer() as Server;
      server.setSecureContext(secureContextOptions(candidate, this.clientCa()));
      this.current = candidate;
      this.notAfter = new Date(x509.validTo);
      this.notBefore = new Date(x509.validFrom);
      this.metrics.certificateReloads.inc({ result: 'success' });
      this.logger.log(`serving certificate ${x509.serialNumber} from ${candidate.source}, valid until ${x509.validTo}`);
      return true;
    } catch (error) {
      this.metrics.certificateReloads.inc({ result: 'failure' });
      this.logger.warn(`refused certificate from ${candidate.source}: ${(error as Error).message}; keeping the current one`);
      return false;
    }
  }

  private offerFiles(): void {
    try {
      this.offer(readServingCertificate(this.config.tls.certFile, this.config.tls.keyFile));
    } catch (error) {
      // Mid-swap reads fail transiently; the next event or poll tries again.
      this.logger.debug?.(`could not read certificate files: ${(error as Error).message}`);
    }
  }

  private clientCa(): string | undefined {
    return this.config.tls.clientCaFile ? readFileSync(this.config.tls.clientCaFile, 'utf8') : undefined;
  }
}
