import { randomBytes } from 'node:crypto';
import { describeApiError } from './api-error.js';
import { EventSpamFilter } from './event-spam-filter.js';
import { resourcePath } from './api-path.js';
import { kubeJson, type KubeClient } from './kube-request.js';

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
  /** How many Events one object may get (default: 25, then one per 5 minutes). */
  readonly spamFilter?: EventSpamFilter;
}

// The apiserver limits messages; keep the start, which says what happened.
const MAX_MESSAGE = 1_024;
// Best effort: never let a reconcile wait long on an event.
const RECORD_TIMEOUT_MS = 10_000;

/**
 * Records core/v1 Events (what `kubectl describe` and `kubectl get events` show) about objects.
 * Never throws: an event that cannot be written must not fail the reconcile that reports it.
 * Events beyond the spam filter's bound for an object are dropped.
 */
export class EventRecorder {
  private readonly spamFilter: EventSpamFilter;

  constructor(
    private readonly kc: KubeClient,
    private readonly options: EventRecorderOptions,
  ) {
    this.spamFilter = options.spamFilter ?? new EventSpamFilter();
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
    if (!this.spamFilter.allow(JSON.stringify([namespace, object.kind, object.name]))) return;
    const now = new Date();
    const text = message.length > MAX_MESSAGE ? `${message.slice(0, MAX_MESSAGE - 3)}...` : message;
    try {
      await kubeJson(this.kc, {
        method: 'POST',
        path: resourcePath({ apiVersion: 'v1', resource: 'events', namespace }),
        timeoutMs: RECORD_TIMEOUT_MS,
        body: {
          apiVersion: 'v1',
          kind: 'Event',
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
      });
    } catch (error) {
      try {
        this.options.logger?.(`could not record ${type} event ${reason} on ${object.kind} ${namespace}/${object.name}: ${describeApiError(error)}`, error);
      } catch {
        // not even the logger may make recording throw
      }
    }
  }
}
