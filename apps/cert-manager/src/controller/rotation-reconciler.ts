import { Inject, Injectable, Logger } from '@nestjs/common';
import { buildMutatingWebhookConfiguration, encodeCaBundle } from '@outrigger/admission';
import { type EventRecorder, type InvolvedObject, describeApiError, type KubeClient } from '@outrigger/kube';
import { KUBE_CLIENT } from '@outrigger/service';
import { type CertManagerConfig, certManagerConfig } from '../config/cert-manager.config.js';
import { CertManagerMetrics } from '../metrics/cert-manager.metrics.js';
import {
  type ChangeReason,
  type ObservedState,
  type RotationAction,
  type RotationChange,
  SERVING_SECRET_TYPE,
  type SecretState,
  type StoredWebhookBundle,
  metricsSnapshot,
  observeState,
  planRotation,
} from '../rotation/index.js';
import {
  type FetchedSecret,
  type RawWebhookConfiguration,
  WEBHOOK_API_VERSION,
  createWebhookConfiguration,
  patchCaBundle,
  readSecret,
  readWebhookConfiguration,
  splitWebhookId,
  webhookId,
  writeSecret,
} from './secret-and-webhook-io.js';
import { EVENT_RECORDER } from './event-recorder.provider.js';

/** What one run read from the API server (never from a cache: caBundles are confirmed by reading them back). */
export interface Observation {
  readonly at: Date;
  /** The objects as fetched, for guarded writes. */
  readonly caSecret?: FetchedSecret;
  readonly servingSecret?: FetchedSecret;
  readonly configurations: ReadonlyMap<string, RawWebhookConfiguration>;
  /** The same, read once into certificates, keys and bundles: what planning, readiness and metrics look at. */
  readonly state: ObservedState;
  /** Register mode: the configuration this service creates does not exist yet. */
  readonly registrationMissing: boolean;
}

export interface RunResult {
  readonly observation: Observation;
  /** Writes made in this run; the next run (at once) confirms them by reading back. */
  readonly writes: number;
  readonly requeueAfterMs: number;
}

/** Reasons counted as rotations (lifecycle steps), as opposed to bookkeeping or repairs. */
const ROTATION_REASONS = new Set<ChangeReason>(['CaCreated', 'CaStaged', 'SignerSwitched', 'SignerForced', 'CaDropped', 'LeafIssued', 'LeafRenewed', 'LeafReplaced']);

/**
 * One level-based run: read both Secrets and every managed webhook caBundle, plan, and (leader
 * only) execute the actions in order, stopping at the first failure.
 */
@Injectable()
export class RotationReconciler {
  private readonly log = new Logger(RotationReconciler.name);

  constructor(
    @Inject(certManagerConfig.KEY) private readonly config: CertManagerConfig,
    @Inject(KUBE_CLIENT) private readonly kc: KubeClient,
    @Inject(EVENT_RECORDER) private readonly events: EventRecorder,
    private readonly metrics: CertManagerMetrics,
  ) {}

  async observe(managedConfigurations: readonly string[]): Promise<Observation> {
    const { namespace, caSecretName, servingSecretName } = this.config;
    const [caSecret, servingSecret] = await Promise.all([readSecret(this.kc, namespace, caSecretName), readSecret(this.kc, namespace, servingSecretName)]);
    const names = new Set(managedConfigurations);
    const registerName = this.config.webhooks.register?.name;
    if (registerName) names.add(registerName);
    const configurations = new Map<string, RawWebhookConfiguration>();
    for (const name of [...names].sort()) {
      const obj = await readWebhookConfiguration(this.kc, name);
      if (obj) configurations.set(name, obj);
    }
    const webhooks: StoredWebhookBundle[] = [];
    for (const [name, obj] of configurations) {
      for (const w of obj.webhooks ?? []) {
        const encoded = w.clientConfig?.caBundle;
        webhooks.push({ name: webhookId(name, w.name ?? ''), caBundle: encoded ? Buffer.from(encoded, 'base64').toString('utf8') : undefined });
      }
    }
    const state = observeState(
      { caSecret: caSecret?.stored, servingSecret: servingSecret?.stored, webhooks },
      { caSecret: `${namespace}/${caSecretName}`, servingSecret: `${namespace}/${servingSecretName}` },
    );
    const observation: Observation = {
      at: new Date(),
      caSecret,
      servingSecret,
      configurations,
      state,
      registrationMissing: registerName !== undefined && !configurations.has(registerName),
    };
    this.metrics.observe(metricsSnapshot({ caSecret: state.caSecret, servingSecret: state.servingSecret }));
    return observation;
  }

  /** Plans and writes; `stillLeader` is asked before every write. */
  async reconcile(observation: Observation, stillLeader: () => boolean): Promise<RunResult> {
    const now = new Date();
    const plan = planRotation({ now, config: this.config.rotation, ...observation.state });
    if (plan.waiting.length > 0) this.log.log(`phase ${plan.phase}; waiting: ${plan.waiting.join('; ')}`);
    let writes = 0;
    for (const action of plan.actions) {
      if (!stillLeader()) return { observation, writes, requeueAfterMs: 0 };
      await this.execute(action, observation);
      writes++;
    }
    if (observation.registrationMissing && this.config.webhooks.register && stillLeader()) {
      await this.register(plan.desired.caBundle);
      writes++;
    }
    const requeueAfterMs = writes > 0 ? 0 : Math.max(0, plan.nextRunAt.getTime() - Date.now());
    return { observation, writes, requeueAfterMs };
  }

  private async execute(action: RotationAction, observation: Observation): Promise<void> {
    const { namespace, caSecretName, servingSecretName } = this.config;
    try {
      switch (action.kind) {
        case 'write-ca-secret': {
          const written = await writeSecret(this.kc, namespace, caSecretName, 'Opaque', action.secret, observation.caSecret);
          await this.report(secretRef(namespace, caSecretName, written.metadata?.uid), action.changes);
          return;
        }
        case 'write-serving-secret': {
          const written = await writeSecret(this.kc, namespace, servingSecretName, SERVING_SECRET_TYPE, action.secret, observation.servingSecret);
          await this.report(secretRef(namespace, servingSecretName, written.metadata?.uid), action.changes);
          return;
        }
        case 'patch-webhook': {
          const { configuration, webhook } = splitWebhookId(action.name);
          const current = observation.configurations.get(configuration);
          if (!current) throw new Error(`MutatingWebhookConfiguration ${configuration} vanished`);
          const result = await patchCaBundle(this.kc, current, webhook, action.caBundle);
          if (!result.applied) throw new Error(`caBundle of ${action.name} not patched (${result.reason}); reading again`);
          await this.report({ apiVersion: WEBHOOK_API_VERSION, kind: 'MutatingWebhookConfiguration', name: configuration, uid: current.metadata?.uid }, action.changes);
          return;
        }
      }
    } catch (error) {
      this.metrics.failures.inc({ step: action.kind });
      throw new Error(`${action.kind}${action.kind === 'patch-webhook' ? ` ${action.name}` : ''} failed: ${describeApiError(error)}`, { cause: error });
    }
  }

  private async register(pemBundle: string): Promise<void> {
    const register = this.config.webhooks.register;
    if (!register) return;
    try {
      const created = await createWebhookConfiguration(
        this.kc,
        buildMutatingWebhookConfiguration({
          name: register.name,
          installNamespace: this.config.namespace,
          client: register.client,
          failurePolicy: register.failurePolicy,
          caBundle: encodeCaBundle(pemBundle),
          injectCaFrom: `${this.config.namespace}/${this.config.servingSecretName}`,
        }),
      );
      await this.events.normal(
        { apiVersion: WEBHOOK_API_VERSION, kind: 'MutatingWebhookConfiguration', name: register.name, uid: created.metadata?.uid },
        'WebhookRegistered',
        `Created MutatingWebhookConfiguration ${register.name} with the current caBundle.`,
      );
    } catch (error) {
      this.metrics.failures.inc({ step: 'register-webhook' });
      throw new Error(`register-webhook ${register.name} failed: ${describeApiError(error)}`, { cause: error });
    }
  }

  private async report(object: InvolvedObject, changes: readonly RotationChange[]): Promise<void> {
    for (const change of changes) {
      this.log.log(`${change.reason}: ${change.message}`);
      if (ROTATION_REASONS.has(change.reason)) this.metrics.rotations.inc({ reason: change.reason });
      if (change.reason === 'WebhookDriftFixed') this.metrics.driftRepairs.inc();
      const warning = change.reason === 'WebhookDriftFixed' || change.reason === 'SecretRepaired' || change.reason === 'CaRecovered' || change.reason === 'SignerForced';
      await (warning ? this.events.warning(object, change.reason, change.message) : this.events.normal(object, change.reason, change.message));
    }
  }
}

function secretRef(namespace: string, name: string, uid?: string): InvolvedObject {
  return { apiVersion: 'v1', kind: 'Secret', namespace, name, uid };
}

export type { SecretState };
