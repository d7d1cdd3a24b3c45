import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import type { KubeClient } from '@outrigger/kube';
import { KUBE_CLIENT } from '@outrigger/service';
import { injectorConfig, type InjectorConfig } from '../config/injector.config.js';
import { InjectorMetrics } from '../metrics/injector.metrics.js';
import type { CertificateSource } from './certificate-source.js';
import { FileCertificateSource } from './file-certificate.source.js';
import { SecretCertificateSource } from './secret-certificate.source.js';
import { type ServingPair, samePair } from './serving-pair.js';

/**
 * The source the HTTPS server asks: the mounted files (TLS_CERT_FILE, TLS_KEY_FILE) or, with
 * TLS_SECRET, the watched Secret. While the Secret is watched it is the authority: the files lag it
 * by up to a minute, so they are read only at startup and while the watch is down, and then never
 * to go back to an older certificate than the one served.
 */
@Injectable()
export class ServingCertificateSource implements CertificateSource, OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(ServingCertificateSource.name);
  private files: FileCertificateSource | undefined;
  private secret: SecretCertificateSource | undefined;
  private served: ServingPair | undefined;

  constructor(
    @Inject(injectorConfig.KEY) private readonly config: InjectorConfig,
    private readonly metrics: InjectorMetrics,
    @Inject(KUBE_CLIENT) private readonly kube: KubeClient | undefined,
  ) {}

  onApplicationBootstrap(): void {
    const { certFile, keyFile, secret } = this.config.tls;
    const refused = (source: string, error: Error) => {
      this.metrics.certificateReloads.inc({ result: 'failure' });
      this.logger.warn(`refused certificate from ${source}: ${error.message}; keeping the current one`);
    };
    const files = new FileCertificateSource(
      { certFile, keyFile, pollMs: this.config.filePollMs, paused: () => this.secret?.live() ?? false },
      { changed: () => this.consider(files.current(), { onlyIfNewer: this.secret !== undefined }), refused },
    );
    this.files = files.start();
    if (secret && this.kube) {
      const watched = new SecretCertificateSource(this.kube, secret, { changed: () => this.consider(watched.current()), refused });
      this.secret = watched.start();
      this.metrics.watches.observe(() => watched.watches());
    }
  }

  async onModuleDestroy(): Promise<void> {
    this.files?.stop();
    await this.secret?.stop();
  }

  current(): ServingPair | undefined {
    return this.served;
  }

  /**
   * The certificate being served (where from, which one, until when, its PEM: public, as every handshake
   * shows it) and, when it is not the source's latest, why: what `outrigger check` verifies against the
   * caBundle without reading the Secret and its key.
   */
  status(): ServingStatus | undefined {
    const served = this.served;
    if (!served) return undefined;
    const { certificate } = served;
    const stale = this.secret?.live() ? this.secret.refusal() : (this.secret?.absence() ?? this.files?.refusal());
    return { source: served.source, notAfter: certificate.notAfter, fingerprint256: certificate.fingerprint256, pem: served.cert, ...(stale ? { stale } : {}) };
  }

  /** Serves `pair` from the next handshake on, if replacesServed says so. */
  private consider(pair: ServingPair | undefined, { onlyIfNewer = false } = {}): void {
    if (!pair || !replacesServed(pair, this.served, onlyIfNewer)) return;
    const { certificate } = pair;
    this.served = pair;
    this.metrics.certificateReloads.inc({ result: 'success' });
    this.metrics.certificateExpiry.set(certificate.notAfter.getTime() / 1000);
    this.logger.log(`serving certificate ${certificate.fingerprint256} (serial ${certificate.serial}) from ${pair.source}, valid until ${certificate.notAfter.toISOString()}`);
  }
}

export interface ServingStatus {
  readonly source: string;
  readonly notAfter: Date;
  readonly fingerprint256: string;
  /** The served certificate chain, PEM. */
  readonly pem: string;
  /** Why the source's latest pair is not what is served: refused, or the Secret gone (the last good pair serves on). */
  readonly stale?: string;
}

/** Whether `candidate` should be served instead of `served`: it differs and, with `onlyIfNewer`, is not older. */
export function replacesServed(candidate: ServingPair, served: ServingPair | undefined, onlyIfNewer: boolean): boolean {
  if (samePair(candidate, served)) return false;
  return !(onlyIfNewer && served && candidate.certificate.notBefore < served.certificate.notBefore);
}
