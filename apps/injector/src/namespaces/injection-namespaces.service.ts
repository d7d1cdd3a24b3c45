import { Inject, Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { INJECTION_LABEL_KEY, INJECTION_LABEL_VALUE, namespacesDigest, type NamespacesHeld } from '@outrigger/admission';
import { OVERRIDABLE_RESOURCES, parsePodSecurityLevel, POD_SECURITY_ENFORCE_LABEL, type PodSecurityLevel } from '@outrigger/agent-profiles';
import { type KubeClient, Reflector, resourcePath } from '@outrigger/kube';
import { KUBE_CLIENT } from '@outrigger/service';
import { injectorConfig, type InjectorConfig } from '../config/injector.config.js';
import { InjectorMetrics } from '../metrics/injector.metrics.js';

/** `<prefix><resource>`: the only namespace annotations the injector keeps (the agents' resource defaults). */
const OVERRIDE_KEY = new RegExp(`/(${OVERRIDABLE_RESOURCES.map((r) => r.replace('.', '\\.')).join('|')})$`);

/** What the injector keeps of a namespace labelled for injection. */
interface InjectionNamespace {
  /** Its labels: which profiles' staged changes (canary) it gets. */
  readonly labels: Readonly<Record<string, string>>;
  /** Its `<prefix><resource>` annotations: the agents' resource defaults. */
  readonly resourceDefaults: Readonly<Record<string, string>>;
  /** The object's resourceVersion: what `digest` is taken over. */
  readonly resourceVersion: string;
}

/**
 * The namespaces labelled for injection (the only ones the webhook is called for), from one watch:
 * their labels (where a scoped profile applies, which get a profile's canary, the Pod Security
 * level they enforce, so that the webhook refuses an agent the namespace would refuse, naming the
 * profile) and the agents' resource defaults they set by annotation (a pod gets them unless it
 * sets its own). Labels and annotations on a namespace are set by whoever may edit namespaces, not
 * by its tenants. Watched only where the injector reads the API (PROFILES_FILE unset); with
 * PROFILES_FILE no namespace gets a canary or a default, and none is refused for its level.
 */
@Injectable()
export class InjectionNamespacesService implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(InjectionNamespacesService.name);
  private reflector: Reflector<InjectionNamespace> | undefined;

  constructor(
    @Inject(injectorConfig.KEY) private readonly config: InjectorConfig,
    @Inject(KUBE_CLIENT) private readonly kube: KubeClient,
    private readonly metrics: InjectorMetrics,
  ) {}

  onModuleInit(): void {
    if (this.config.profilesFile) return;
    this.reflector = new Reflector<InjectionNamespace>(this.kube, {
      path: resourcePath({ apiVersion: 'v1', resource: 'namespaces' }),
      labelSelector: `${INJECTION_LABEL_KEY}=${INJECTION_LABEL_VALUE}`,
      project: (namespace) => ({
        labels: namespace.metadata?.labels ?? {},
        resourceDefaults: Object.fromEntries(Object.entries(namespace.metadata?.annotations ?? {}).filter(([key]) => OVERRIDE_KEY.test(key))),
        resourceVersion: namespace.metadata?.resourceVersion ?? '',
      }),
      onError: (_error, info) => this.logger.warn(`watch namespaces: ${info.message}`),
    }).start();
    const reflector = this.reflector;
    this.metrics.watches.observe(() => ({ namespaces: reflector.status() }));
  }

  async onModuleDestroy(): Promise<void> {
    await this.reflector?.stop();
  }

  /** The labels of `namespace`; undefined when it is not labelled for injection or nothing is watched. */
  labels(namespace: string): Readonly<Record<string, string>> | undefined {
    return this.reflector?.get(namespace)?.labels;
  }

  /** The Pod Security level `namespace` enforces; undefined when it has no (known) level or nothing is watched. */
  enforced(namespace: string): PodSecurityLevel | undefined {
    return parsePodSecurityLevel(this.labels(namespace)?.[POD_SECURITY_ENFORCE_LABEL]);
  }

  /** Whether namespaces are watched at all (PROFILES_FILE unset). */
  watched(): boolean {
    return this.reflector !== undefined;
  }

  /** The resource-default annotations of `namespace`; undefined when it is not labelled for injection or nothing is watched. */
  annotations(namespace: string): Readonly<Record<string, string>> | undefined {
    return this.reflector?.get(namespace)?.resourceDefaults;
  }

  /** How many namespaces are held and their digest, which `outrigger check` compares with the API server's; undefined when nothing is watched. */
  held(): NamespacesHeld | undefined {
    if (!this.reflector) return undefined;
    const entries = this.reflector.entries();
    return { held: entries.length, digest: namespacesDigest(entries.map(([name, { resourceVersion }]) => ({ name, resourceVersion }))) };
  }

  /** Undefined once the first list completed (or when nothing is watched), else why not. */
  notReadyReason(): string | undefined {
    const status = this.reflector?.status();
    if (!status || status.hasSynced) return undefined;
    return `the namespaces labelled for injection (their Pod Security levels, labels and the agents' resource defaults) are not known yet: ${status.lastError ?? 'the namespace list has not completed yet'}`;
  }
}
