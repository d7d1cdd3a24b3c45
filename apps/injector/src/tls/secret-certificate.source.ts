import { Logger } from '@nestjs/common';
import { Controller, type KubeClient, type KubeObject, type Reflector, type ReflectorStatus, resourcePath } from '@outrigger/kube';
import { LastGoodPairSource, type SourceEvents } from './certificate-source.js';

interface SecretPair {
  readonly cert: string;
  readonly key: string;
}

/** The PEM pair of a `kubernetes.io/tls` Secret, or undefined while it lacks one. */
export function pairFromSecret(secret: KubeObject): SecretPair | undefined {
  const data = (secret as { data?: Record<string, string> }).data;
  const decode = (key: string) => (data?.[key] ? Buffer.from(data[key], 'base64').toString('utf8') : '');
  const pair = { cert: decode('tls.crt'), key: decode('tls.key') };
  return pair.cert && pair.key ? pair : undefined;
}

/**
 * The serving Secret's pair the moment the API server has it (TLS_SECRET): a watch on that one
 * Secret, so RBAC can grant it by resourceNames. A pair that does not parse, does not match or has
 * expired is refused and the last good one stays current.
 */
export class SecretCertificateSource extends LastGoodPairSource {
  private readonly logger = new Logger(SecretCertificateSource.name);
  private readonly source: string;
  private controller: Controller | undefined;
  private reflector: Reflector<SecretPair> | undefined;

  constructor(
    private readonly kc: KubeClient,
    private readonly secret: { readonly namespace: string; readonly name: string },
    events: SourceEvents,
  ) {
    super(events);
    this.source = `Secret ${secret.namespace}/${secret.name}`;
  }

  /** The watch has the Secret and is up to date: its pair is the authority. */
  live(): boolean {
    return this.reflector !== undefined && this.reflector.status().viewComplete && this.reflector.keys().length > 0;
  }

  /** Why the Secret gives nothing to serve, once its watch is up to date: undefined while it holds a pair. */
  absence(): string | undefined {
    const reflector = this.reflector;
    return reflector?.status().viewComplete && reflector.keys().length === 0 ? `${this.source} is gone or holds no tls.crt and tls.key` : undefined;
  }

  /** The Secret's watch, for metrics. */
  watches(): Readonly<Record<string, ReflectorStatus>> {
    return this.controller?.status().watches ?? {};
  }

  start(): this {
    // One key, no Lease: every replica serves what its Secret holds.
    const logger = this.logger;
    this.controller = new Controller(this.kc, {
      keys: () => [this.secret.name],
      log: { log: (m) => logger.log(m), warn: (m) => logger.warn(`${m}; the last good pair stays in use`) },
    });
    this.reflector = this.controller.watches<SecretPair>(`secret ${this.secret.name}`, {
      path: resourcePath({ apiVersion: 'v1', resource: 'secrets', namespace: this.secret.namespace }),
      fieldSelector: `metadata.name=${this.secret.name}`,
      project: pairFromSecret,
    });
    this.controller.run(() => {
      const [entry] = this.reflector?.entries() ?? [];
      if (entry) this.offerSecret(entry[1]);
    });
    logger.log(`watching ${this.source} for new serving certificates`);
    return this;
  }

  async stop(): Promise<void> {
    await this.controller?.shutdown();
  }

  private offerSecret({ cert, key }: SecretPair): void {
    const { source } = this;
    this.offer({ cert, key, source, certFrom: `${source} tls.crt`, keyFrom: `${source} tls.key` });
  }
}
