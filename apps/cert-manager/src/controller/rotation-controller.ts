import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { LeaderElector, Reflector, WorkQueue, type KubeObject, type KubeClient } from '@outrigger/kube';
import { type CertManagerConfig, certManagerConfig } from '../config/cert-manager.config.js';
import { CertManagerMetrics } from '../metrics/cert-manager.metrics.js';
import { type Readiness, readiness } from '../rotation/index.js';
import { type RawWebhookConfiguration, isManaged, secretPath, webhookConfigurationsPath } from './secret-and-webhook-io.js';
import { KUBE_CLIENT } from './kube.providers.js';
import { type Observation, RotationReconciler } from './rotation-reconciler.js';

/** The single work-queue key: every trigger asks for the same complete run. */
export const RECONCILE_KEY = 'rotation';

type WebhookProjection = ReadonlyArray<{ readonly name?: string; readonly caBundle?: string }>;

/**
 * Wires the triggers to one reconcile loop: watches on both Secrets and on the managed
 * MutatingWebhookConfigurations (drift is seen within seconds), a timer at the plan's nextRunAt,
 * a periodic wall-clock check (timers stop on suspended machines), and leadership changes.
 * Every replica observes (for /readyz and metrics); only the Lease holder writes.
 */
@Injectable()
export class RotationController implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly log = new Logger(RotationController.name);
  private readonly queue: WorkQueue;
  private readonly elector: LeaderElector;
  private readonly reflectors: { readonly secrets: Reflector<string>[]; readonly webhooks: Reflector<WebhookProjection>[] };
  private clock: NodeJS.Timeout | undefined;
  private processing: Promise<void> | undefined;
  private last: Observation | undefined;

  constructor(
    @Inject(certManagerConfig.KEY) private readonly config: CertManagerConfig,
    @Inject(KUBE_CLIENT) kc: KubeClient,
    private readonly reconciler: RotationReconciler,
    private readonly metrics: CertManagerMetrics,
  ) {
    this.queue = new WorkQueue({
      baseDelayMs: 500,
      maxDelayMs: 30_000,
      onError: (_key, error, retryIn) => {
        this.metrics.reconciles.inc({ result: 'error' });
        this.log.warn(`reconcile failed (retry in ${retryIn} ms): ${error instanceof Error ? error.message : String(error)}`);
      },
    });
    const trigger = () => this.queue.add(RECONCILE_KEY);
    const onError = (what: string) => (_e: unknown, info: { message: string }) => this.log.warn(`${what}: ${info.message}`);
    const secretReflector = (name: string) =>
      new Reflector<string>(kc, {
        path: secretPath(config.namespace),
        fieldSelector: `metadata.name=${name}`,
        project: (obj) => obj.metadata?.resourceVersion ?? '',
        onAdd: trigger,
        onUpdate: trigger,
        onDelete: trigger,
        onSynced: trigger,
        onError: onError(`watch of Secret ${name}`),
      });
    const selection = {
      names: [...new Set(config.webhooks.register ? [...config.webhooks.names, config.webhooks.register.name] : config.webhooks.names)],
      selectByAnnotation: config.webhooks.selectByAnnotation,
      secretRefs: [`${config.namespace}/${config.servingSecretName}`, `${config.namespace}/${config.caSecretName}`],
    };
    this.reflectors = {
      secrets: [secretReflector(config.caSecretName), secretReflector(config.servingSecretName)],
      // By name only: one watch per name (field selector), which RBAC can limit by resourceNames;
      // with annotation selection, one cluster-wide watch filtered here.
      webhooks: (config.webhooks.selectByAnnotation ? [undefined] : selection.names).map(
        (name) =>
          new Reflector<WebhookProjection>(kc, {
            path: webhookConfigurationsPath(),
            ...(name ? { fieldSelector: `metadata.name=${name}` } : {}),
            project: (obj: KubeObject) =>
              isManaged(obj, selection)
                ? ((obj as RawWebhookConfiguration).webhooks ?? []).map((w) => ({ name: w.name, caBundle: w.clientConfig?.caBundle }))
                : undefined,
            onAdd: trigger,
            onUpdate: trigger,
            onDelete: trigger,
            onSynced: trigger,
            onError: onError(`watch of MutatingWebhookConfigurations${name ? ` ${name}` : ''}`),
          }),
      ),
    };
    this.elector = new LeaderElector(kc, {
      ...config.lease,
      onStartedLeading: () => {
        this.log.log(`leading as ${this.elector.identity}`);
        this.metrics.leader.set(1);
        trigger();
      },
      onStoppedLeading: () => {
        this.log.log('stopped leading');
        this.metrics.leader.set(0);
      },
      onNewLeader: (identity) => this.log.log(`leader is ${identity}`),
      onError: (_e, info) => this.log.warn(`leader election: ${info.message}`),
    });
  }

  onApplicationBootstrap(): void {
    this.metrics.leader.set(0);
    for (const r of [...this.reflectors.secrets, ...this.reflectors.webhooks]) r.start();
    this.elector.start();
    // Re-read the wall clock periodically: a nextRunAt timer does not fire early after a suspend.
    this.clock = setInterval(() => this.queue.add(RECONCILE_KEY), this.config.wallClockCheckMs);
    this.clock.unref();
    this.processing = this.queue.process(() => this.run());
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.clock) clearInterval(this.clock);
    await this.elector.stop();
    await this.queue.shutdown();
    await this.processing;
    await Promise.all([...this.reflectors.secrets, ...this.reflectors.webhooks].map((r) => r.stop()));
  }

  isLeader(): boolean {
    return this.elector.isLeader();
  }

  /** The last observation, for /readyz. */
  observation(): Observation | undefined {
    return this.last;
  }

  readiness(now = new Date()): Readiness {
    const observed = this.last;
    if (!observed) return { ready: false, reasons: ['nothing observed yet'] };
    const result = readiness({
      now,
      servingSecret: observed.state.servingSecret,
      webhooks: observed.state.webhooks,
      minValidityMs: this.config.readyMinValidityMs,
    });
    return observed.registrationMissing ? { ready: false, reasons: ['the MutatingWebhookConfiguration is not registered yet', ...result.reasons] } : result;
  }

  private async run(): Promise<{ requeueAfterMs: number }> {
    // Without a complete view of the webhooks, "no webhook holds the new CA" proves nothing.
    if (!this.reflectors.webhooks.every((r) => r.status().hasSynced && r.status().viewComplete)) return { requeueAfterMs: 1_000 };
    const observation = await this.reconciler.observe(this.reflectors.webhooks.flatMap((r) => r.keys()));
    this.last = observation;
    if (!this.elector.isLeader()) {
      this.metrics.reconciles.inc({ result: 'observed' });
      return { requeueAfterMs: this.config.wallClockCheckMs };
    }
    const result = await this.reconciler.reconcile(observation, () => this.elector.isLeader());
    this.metrics.reconciles.inc({ result: result.writes > 0 ? 'wrote' : 'unchanged' });
    return { requeueAfterMs: Math.min(result.requeueAfterMs, this.config.rotation.recheckMs) };
  }
}
