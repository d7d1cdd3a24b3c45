import { Inject, Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { parsePodSecurityLevel, POD_SECURITY_ENFORCE_LABEL, type PodSecurityLevel } from '@outrigger/agent-profiles';
import { type KubeClient, Reflector, resourcePath } from '@outrigger/kube';
import { KUBE_CLIENT } from '@outrigger/service';
import { injectorConfig, type InjectorConfig } from '../config/injector.config.js';

/**
 * The Pod Security level each namespace enforces, from a watch of the namespaces that carry the
 * `pod-security.kubernetes.io/enforce` label (only the level is kept), so that the webhook can
 * refuse an agent the namespace would refuse, naming the profile. Watched only where the injector
 * reads the API (PROFILES_FILE unset); with PROFILES_FILE no pod is refused for its namespace.
 */
@Injectable()
export class NamespacePodSecurityService implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(NamespacePodSecurityService.name);
  private reflector: Reflector<PodSecurityLevel> | undefined;

  constructor(
    @Inject(injectorConfig.KEY) private readonly config: InjectorConfig,
    // Provided whenever PROFILES_FILE is unset (app.module.ts).
    @Inject(KUBE_CLIENT) private readonly kube: KubeClient,
  ) {}

  onModuleInit(): void {
    if (this.config.profilesFile) return;
    // Not awaited, like the AgentProfile watch: until it has listed, the injector is not ready.
    this.reflector = new Reflector<PodSecurityLevel>(this.kube, {
      path: resourcePath({ apiVersion: 'v1', resource: 'namespaces' }),
      labelSelector: POD_SECURITY_ENFORCE_LABEL,
      project: (namespace) => parsePodSecurityLevel(namespace.metadata?.labels?.[POD_SECURITY_ENFORCE_LABEL]),
      onError: (_error, info) => this.logger.warn(`watch namespaces: ${info.message}`),
    }).start();
  }

  async onModuleDestroy(): Promise<void> {
    await this.reflector?.stop();
  }

  /** The level `namespace` enforces; undefined when it has no (known) level or nothing is watched. */
  enforced(namespace: string): PodSecurityLevel | undefined {
    return this.reflector?.get(namespace);
  }

  /** Whether namespaces are watched at all (PROFILES_FILE unset). */
  watched(): boolean {
    return this.reflector !== undefined;
  }

  /** Undefined once the first list completed (or when nothing is watched), else why not. */
  notReadyReason(): string | undefined {
    const status = this.reflector?.status();
    if (!status || status.hasSynced) return undefined;
    return `the namespaces' Pod Security labels are not known yet: ${status.lastError ?? 'the namespace list has not completed yet'}`;
  }
}
