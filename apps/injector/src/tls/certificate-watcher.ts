import { readFileSync } from 'node:fs';
import type { Server } from 'node:https';
import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { injectorConfig, type InjectorConfig } from '../config/injector.config.js';
import { InjectorMetrics } from '../metrics/injector.metrics.js';
import { watchFiles } from './file-watch.js';
import { readServingCertificate, secureContextOptions, validateServingCertificate, type ServingCertificate } from './serving-certificate.js';

/**
 * Keeps the HTTPS server on a valid serving certificate without a restart (like controller-runtime's
 * certwatcher). Sources push candidates through `offer`; a candidate that does not parse, does not
 * match its key or has expired is refused and the current one stays. While the Secret is watched
 * (TLS_SECRET) it is the authority: the mounted files lag it by up to a minute, so they are read
 * only at startup and while the watch is down, and then never to go back to an older certificate.
 */
@Injectable()
export class CertificateWatcher implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(CertificateWatcher.name);
  private current: ServingCertificate | undefined;
  private notAfter: Date | undefined;
  private notBefore: Date | undefined;
  private fingerprint256: string | undefined;
  private stopWatching: (() => void) | undefined;
  /** While it answers true, a watched Secret is the authority and the (lagging) files are not read. */
  private authorityLive: (() => boolean) | undefined;
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

  /** Called by a source that follows the Secret itself; the files become its fallback. */
  useAuthority(live: () => boolean): void {
    this.authorityLive = live;
  }

  /** The certificate being served: where from, which one (for matching against the Secret), until when. */
  status(): { source: string; notAfter: Date; fingerprint256: string } | undefined {
    return this.current && this.notAfter && this.fingerprint256
      ? { source: this.current.source, notAfter: this.notAfter, fingerprint256: this.fingerprint256 }
      : undefined;
  }

  /** Serves `candidate` from now on if it is valid, differs from the current one and, if `onlyIfNewer`, is newer. */
  offer(candidate: ServingCertificate, { onlyIfNewer = false } = {}): boolean {
    const seen = `${candidate.cert}\n${candidate.key}`;
    if (seen === this.lastSeen) return false;
    this.lastSeen = seen;
    // The same pair from the other source (the files catching up with the Secret): nothing to do.
    if (this.current && `${this.current.cert}\n${this.current.key}` === seen) return false;
    try {
      const x509 = validateServingCertificate(candidate);
      if (onlyIfNewer && this.notBefore && new Date(x509.validFrom) < this.notBefore) return false;
      const server = this.adapterHost.httpAdapter.getHttpServer() as Server;
      server.setSecureContext(secureContextOptions(candidate, this.clientCa()));
      this.current = candidate;
      this.notAfter = new Date(x509.validTo);
      this.notBefore = new Date(x509.validFrom);
      this.fingerprint256 = x509.fingerprint256;
      this.metrics.certificateReloads.inc({ result: 'success' });
      this.metrics.certificateExpiry.set(this.notAfter.getTime() / 1000);
      this.logger.log(`serving certificate ${x509.fingerprint256} (serial ${x509.serialNumber}) from ${candidate.source}, valid until ${x509.validTo}`);
      return true;
    } catch (error) {
      this.metrics.certificateReloads.inc({ result: 'failure' });
      this.logger.warn(`refused certificate from ${candidate.source}: ${(error as Error).message}; keeping the current one`);
      return false;
    }
  }

  private offerFiles(): void {
    if (this.authorityLive?.()) return;
    try {
      // With a Secret watch (down at the moment), the files may still lag what it delivered.
      this.offer(readServingCertificate(this.config.tls.certFile, this.config.tls.keyFile), { onlyIfNewer: this.authorityLive !== undefined });
    } catch (error) {
      // Mid-swap reads fail transiently; the next event or poll tries again.
      this.logger.debug?.(`could not read certificate files: ${(error as Error).message}`);
    }
  }

  private clientCa(): string | undefined {
    return this.config.tls.clientCaFile ? readFileSync(this.config.tls.clientCaFile, 'utf8') : undefined;
  }
}
