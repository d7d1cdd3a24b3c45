import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { Reflector, loadKubeClient, resourcePath, type KubeObject } from '@outrigger/kube';
import { injectorConfig, type InjectorConfig } from '../config/injector.config.js';
import { CertificateWatcher } from './certificate-watcher.js';

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
 * Offers the serving Secret's certificate to the CertificateWatcher the moment the API server has
 * it (TLS_SECRET): a watch on that one Secret, so RBAC can grant it by resourceNames. The mounted
 * files remain the fallback while the API cannot be reached; the watcher refuses older leaves,
 * so the lagging files never win back.
 */
@Injectable()
export class SecretCertificateSource implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(SecretCertificateSource.name);
  private reflector: Reflector<SecretPair> | undefined;

  constructor(
    @Inject(injectorConfig.KEY) private readonly config: InjectorConfig,
    private readonly watcher: CertificateWatcher,
  ) {}

  onApplicationBootstrap(): void {
    const secret = this.config.tls.secret;
    if (!secret) return;
    const source = `Secret ${secret.namespace}/${secret.name}`;
    const offer = (pair: SecretPair) => this.watcher.offer({ source, ...pair, certFrom: `${source} tls.crt`, keyFrom: `${source} tls.key` });
    this.reflector = new Reflector(loadKubeClient(this.config.kubeconfig), {
      path: resourcePath({ apiVersion: 'v1', resource: 'secrets', namespace: secret.namespace }),
      fieldSelector: `metadata.name=${secret.name}`,
      project: pairFromSecret,
      onAdd: (_key, pair) => offer(pair),
      onUpdate: (_key, pair) => offer(pair),
      onError: (_error, info) => this.logger.warn(`watching ${source}: ${info.message}; the mounted files stay in use`),
    }).start();
    const reflector = this.reflector;
    this.watcher.useAuthority(() => reflector.status().viewComplete && reflector.keys().length > 0);
    this.logger.log(`watching ${source} for new serving certificates`);
  }

  async onModuleDestroy(): Promise<void> {
    await this.reflector?.stop();
  }
}
