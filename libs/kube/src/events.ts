import { randomBytes } from 'node:crypto';
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { describeApiError } from './api-error.js';
import { withRequestTimeout } from './request-timeout.js';

/** The object an event is about. Cluster-scoped objects have no namespace; their events go to `default`. */
export interface InvolvedObject {
  readonly apiVersion?: string;
  readonly kind: string;
  readonly name: string;
  readonly namespace?: string;
  readonly uid?: string;
}

export type EventType = 'Normal' | 'Warning';

export interface EventRecorderOptions {
  /** Who reports, e.g. `outrigger-rbac-syncer` (source.component, reportingComponent). */
  readonly component: string;
  /** Which replica reports, e.g. the pod name (source.host, reportingInstance). */
  readonly instance: string;
  /** Told when an event could not be recorded; events are best effort. */
  readonly logger?: (message: string, error: unknown) => void;
}

// The apiserver limits messages; keep the start, which says what happened.
const MAX_MESSAGE = 1_024;
// Best effort: never let a reconcile wait long on an event.
const RECORD_TIMEOUT = withRequestTimeout(10_000);

/**
 * Records core/v1 Events (what `kubectl describe` and `kubectl get events` show) about objects.
 * Never throws: an event that cannot be written must not fail the reconcile that reports it.
 */
export class EventRecorder {
  private readonly core: CoreV1Api;

  constructor(
    kc: KubeConfig,
    private readonly options: EventRecorderOptions,
  ) {
    this.core = kc.makeApiClient(CoreV1Api);
  }

  normal(object: InvolvedObject, reason: string, message: string): Promise<void> {
    return this.record(object, 'Normal', reason, message);
  }

  warning(object: InvolvedObject, reason: string, message: string): Promise<void> {
    return this.record(object, 'Warning', reason, message);
  }

  /** Resolves once written or given up on (the failure goes to the logger). */
  async record(object: InvolvedObject, type: EventType, reason: string, message: string): Promise<void> {
    const namespace = object.namespace || 'default';
    const now = new Date();
    const text = message.length > MAX_MESSAGE ? `${message.slice(0, MAX_MESSAGE - 3)}...` : message;
    try {
      await this.core.createNamespacedEvent({
        namespace,
        body: {
          // Unique like client-go's `<object>.<timestamp hex>`, so events never collide.
          metadata: { name: `${object.name}.${now.getTime().toString(16)}${randomBytes(2).toString('hex')}`, namespace },
          involvedObject: { apiVersion: object.apiVersion, kind: object.kind, name: object.name, namespace: object.namespace, uid: object.uid },
          type,
          reason,
          message: text,
          count: 1,
          firstTimestamp: now,
          lastTimestamp: now,
          source: { component: this.options.component, host: this.options.instance },
          reportingComponent: this.options.component,
          reportingInstance: this.options.instance,
        },
      }, RECORD_TIMEOUT);
    } catch (error) {
      try {
        this.options.logger?.(`could not record ${type} event ${reason} on ${object.kind} ${namespace}/${object.name}: ${describeApiError(error)}`, error);
      } catch {
        // not even the logger may make recording throw
      }
    }
  }
}
