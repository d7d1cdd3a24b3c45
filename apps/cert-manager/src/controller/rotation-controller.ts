import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { Controller, type KubeClient, type KubeObject, type Reflector } from '@outrigger/kube';
import { holderVersionAnnotations } from '@outrigger/install/names';
import { KUBE_CLIENT } from '@outrigger/service';
import { type CertManagerConfig, certManagerConfig } from '../config/cert-manager.config.js';
import { CERT_MANAGER_VERSION } from '../config/version.js';
import { CertManagerMetrics } from '../metrics/cert-manager.metrics.js';
import { type Readiness, readiness } from '../rotation/index.js';
import { type RawWebhookConfiguration, isManaged, secretPath, webhookConfigurationsPath } from './secret-and-webhook-io.js';
import { type Observation, RotationReconciler } from './rotation-reconciler.js';

/** The single work-queue key: every trigger asks for the same complete run. */
export const RECONCILE_KEY = 'rotation';

type WebhookProjection = ReadonlyArray<{ readonly name?: string; readonly caBundle?: string }>;

/**
 * One reconcile loop, declared over the controller toolkit: watches on both Secrets and on the
 * managed MutatingWebhookConfigurations (drift is seen within seconds), a requeue at the plan's
 * nextRunAt, a periodic wall-clock resync (timers stop on suspended machines), and leadership.
 * Every replica observes (for /readyz and metrics); only the Lease holder writes.
 */
@Injectable()
export class RotationController implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly log = new Logger(RotationController.name);
  private readonly controller: Controller;
  private readonly webhooks: Reflector<WebhookProjection>[];
  private last: Observation | undefined;

  constructor(
    @Inject(certManagerConfig.KEY) private readonly config: CertManagerConfig,
    @Inject(KUBE_CLIENT) kc: KubeClient,
    private readonly reconciler: RotationReconciler,
    private readonly metrics: CertManagerMetrics,
  ) {
    this.controller = new Controller(kc, {
      keys: () => [RECONCILE_KEY],
      log: this.log,
      // Re-read the wall clock periodically: a nextRunAt timer does not fire early after a suspend.
      resyncMs: config.wallClockCheckMs,
      queue: { baseDelayMs: 500, maxDelayMs: 30_000 },
      leaderElection: {
        ...config.lease,
        // Which version leads, for `outrigger check`.
        annotations: (identity) => holderVersionAnnotations(identity, CERT_MANAGER_VERSION),
        onStartedLeading: () => {
          this.log.log(`leading as ${this.controller.identity}`);
          this.metrics.leader.set(1);
        },
        onStoppedLeading: () => {
          this.log.log('stopped leading');
          this.metrics.leader.set(0);
        },
      },
      // Every replica observes, for /readyz and metrics; run() writes only as the Lease holder.
      reconcileWhenFollowing: true,
    });
    for (const name of [config.caSecretName, config.servingSecretName]) {
      this.controller.watches<string>(`secret ${name}`, {
        path: secretPath(config.namespace),
        fieldSelector: `metadata.name=${name}`,
        project: (obj) => obj.metadata?.resourceVersion ?? '',
      });
    }
    const selection = {
      names: [...new Set(config.webhooks.register ? [...config.webhooks.names, config.webhooks.register.name] : config.webhooks.names)],
      selectByAnnotation: config.webhooks.selectByAnnotation,
      secretRefs: [`${config.namespace}/${config.servingSecretName}`, `${config.namespace}/${config.caSecretName}`],
    };
    // By name only: one watch per name (field selector), which RBAC can limit by resourceNames;
    // with annotation selection, one cluster-wide watch filtered here.
    this.webhooks = (config.webhooks.selectByAnnotation ? [undefined] : selection.names).map((name) =>
      this.controller.watches<WebhookProjection>(`mutatingwebhookconfigurations${name ? ` ${name}` : ''}`, {
        path: webhookConfigurationsPath(),
        ...(name ? { fieldSelector: `metadata.name=${name}` } : {}),
        project: (obj: KubeObject) =>
          isManaged(obj, selection) ? ((obj as RawWebhookConfiguration).webhooks ?? []).map((w) => ({ name: w.name, caBundle: w.clientConfig?.caBundle })) : undefined,
      }),
    );
  }

  onApplicationBootstrap(): void {
    this.metrics.leader.set(0);
    this.metrics.watches.observe(() => this.controller.status().watches);
    this.controller.run(
      () => this.run(),
      (_key, error, retryIn) => {
        this.metrics.reconciles.inc({ result: 'error' });
        this.log.warn(`reconcile failed (retry in ${retryIn} ms): ${error instanceof Error ? error.message : String(error)}`);
      },
    );
  }

  async onApplicationShutdown(): Promise<void> {
    await this.controller.shutdown();
  }

  isLeader(): boolean {
    return this.controller.isLeader();
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
    if (!this.webhooks.every((r) => r.status().hasSynced && r.status().viewComplete)) return { requeueAfterMs: 1_000 };
    const observation = await this.reconciler.observe(this.webhooks.flatMap((r) => r.keys()));
    this.last = observation;
    if (!this.controller.isLeader()) {
      this.metrics.reconciles.inc({ result: 'observed' });
      return { requeueAfterMs: this.config.wallClockCheckMs };
    }
    const result = await this.reconciler.reconcile(observation, () => this.controller.isLeader());
    this.metrics.reconciles.inc({ result: result.writes > 0 ? 'wrote' : 'unchanged' });
    return { requeueAfterMs: Math.min(result.requeueAfterMs, this.config.rotation.recheckMs) };
  }
}
