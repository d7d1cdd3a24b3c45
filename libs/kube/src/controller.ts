import type { ApiErrorInfo } from './api-error.js';
import type { KubeClient } from './kube-request.js';
import { LeaderElector, type LeaderElectionOptions } from './leader-election.js';
import { Reflector, type ReflectorOptions, type ReflectorStatus } from './reflector.js';
import { type HandlerResult, type KeyedOptions, WorkQueue, type WorkQueueOptions } from './work-queue.js';

/** What a reconcile asks for: nothing, or to be looked at again after a while. */
export type ReconcileResult = HandlerResult | void;

/** Reconciles one key: level-based, idempotent; a throw is retried with backoff. */
export type Reconcile<K = string> = (key: K) => Promise<ReconcileResult> | ReconcileResult;

/** Told about every failed reconcile, before its retry (retryInMs is -1 while shutting down). */
export type ErrorPolicy<K = string> = (key: K, error: unknown, retryInMs: number) => void;

export interface ControllerOptions<K = string> {
  /** Every key the controller is responsible for: a resync, a new leader and `enqueueAll` queue them all. */
  readonly keys: () => Iterable<K>;
  /** Told about watch failures and leadership changes, for the logs. */
  readonly log: { log(message: string): void; warn(message: string): void };
  /** Every key is reconciled at least this often, events or not. None by default. */
  readonly resyncMs?: number;
  /** For every watch; see ReflectorOptions. */
  readonly deadStreamTimeoutMs?: number;
  readonly queue?: Pick<WorkQueueOptions, 'baseDelayMs' | 'maxDelayMs' | 'concurrency'>;
  /**
   * With a Lease, only its holder reconciles; every replica watches, so a new leader starts warm.
   * On leading, every key is queued.
   */
  readonly leaderElection?: Omit<LeaderElectionOptions, 'onNewLeader' | 'onError'>;
  /** Followers reconcile too (to observe, e.g. for readiness); reconcile must then check isLeader() before writing. */
  readonly reconcileWhenFollowing?: boolean;
  /** How keys are told apart; required for keys that are not strings (see WorkQueueOptions). */
  readonly keyId?: (key: K) => string;
}

/** One watch, declared: a Reflector whose changes queue keys. */
export interface WatchOptions<P, K = string, V = never> extends Omit<ReflectorOptions<P, V>, 'onAdd' | 'onUpdate' | 'onDelete' | 'onSynced' | 'onError' | 'deadStreamTimeoutMs'> {
  /**
   * The keys an object's projection concerns (called for the new and, on update and delete, the
   * old projection). Without it, any change queues every key.
   */
  readonly mapper?: (value: P) => Iterable<K>;
  /** Runs on every change and after every complete list, before keys are queued (e.g. to reload configuration). */
  readonly onChange?: () => void;
  /** Queue every key after each complete list; true by default. */
  readonly resyncOnList?: boolean;
}

export interface ControllerStatus {
  readonly watches: Readonly<Record<string, ReflectorStatus>>;
  /** Every watch has completed a list. */
  readonly synced: boolean;
  readonly leader: boolean;
  /** Keys waiting to be reconciled. */
  readonly queued: number;
}

/**
 * A controller declared rather than wired, after kube-rs's `Controller::new(..).watches(..).run(
 * reconcile, error_policy)`: named watches (projections only) map changes to keys of one work
 * queue; `run` reconciles them, only on the Lease holder when there is a Lease, with a periodic
 * resync; `status()` feeds health and metrics; `shutdown()` stops in one order (timers, queue,
 * Lease released so a standby takes over at once, watches). Watches may be added while running.
 */
export class Controller<K = string> {
  private readonly declared = new Map<string, Reflector<unknown, unknown>>();
  private readonly queue: WorkQueue<K>;
  private readonly elector: LeaderElector | undefined;
  private readonly errorPolicies: ErrorPolicy<K>[] = [];
  private resyncTimer: NodeJS.Timeout | undefined;
  private processing: Promise<void> | undefined;

  constructor(
    private readonly kc: KubeClient,
    private readonly options: KeyedOptions<K, ControllerOptions<K>>,
  ) {
    const queue: WorkQueueOptions<K> = { ...options.queue, keyId: options.keyId, onError: (key, error, retryIn) => this.errorPolicies.forEach((policy) => policy(key, error, retryIn)) };
    this.queue = new WorkQueue<K>(queue as KeyedOptions<K, WorkQueueOptions<K>>);
    const lease = options.leaderElection;
    this.elector = lease
      ? new LeaderElector(kc, {
          ...lease,
          onStartedLeading: () => {
            lease.onStartedLeading?.();
            this.enqueueAll();
          },
          onNewLeader: (identity) => options.log.log(`leader is ${identity}`),
          onError: (_error, info) => options.log.warn(`leader election ${lease.namespace}/${lease.name}: ${info.message}`),
        })
      : undefined;
  }

  /** Declares a watch under `name` (the resource, for status and metrics) and returns its store. */
  watches<P, V = never>(name: string, options: WatchOptions<P, K, V>): Reflector<P, V> {
    if (this.declared.has(name)) throw new Error(`watch ${name} is declared twice`);
    const { mapper, onChange, resyncOnList = true, ...reflector } = options;
    const changed = (...values: P[]) => {
      onChange?.();
      if (!mapper) return this.enqueueAll();
      for (const value of values) for (const key of mapper(value)) this.enqueue(key);
    };
    const watch = new Reflector<P, V>(this.kc, {
      ...reflector,
      ...(this.options.deadStreamTimeoutMs === undefined ? {} : { deadStreamTimeoutMs: this.options.deadStreamTimeoutMs }),
      onAdd: (_key, value) => changed(value),
      onUpdate: (_key, value, old) => changed(value, old),
      onDelete: (_key, old) => changed(old),
      onSynced: () => {
        onChange?.();
        if (resyncOnList) this.enqueueAll();
      },
      onError: (_error: unknown, info: ApiErrorInfo) => this.options.log.warn(`watch ${name}: ${info.message}`),
    });
    this.declared.set(name, watch as Reflector<unknown, unknown>);
    if (this.processing) watch.start();
    return watch;
  }

  /** Starts the watches, the Lease and the reconcile loop. */
  run(reconcile: Reconcile<K>, errorPolicy?: ErrorPolicy<K>): this {
    if (this.processing) throw new Error('Controller.run() may only be called once');
    if (errorPolicy) this.errorPolicies.push(errorPolicy);
    this.declared.forEach((watch) => watch.start());
    // Only the leader reconciles (unless followers observe); a follower's keys wait for leadership or the next event.
    this.processing = this.queue.process((key) => (this.isLeader() || this.options.reconcileWhenFollowing ? reconcile(key) : undefined));
    this.elector?.start();
    if (this.options.resyncMs) {
      this.resyncTimer = setInterval(() => this.enqueueAll(), this.options.resyncMs);
      this.resyncTimer.unref();
    }
    return this;
  }

  enqueue(key: K): void {
    this.queue.add(key);
  }

  /** Queues `key` after `ms` (of several pending delays for one key the earliest wins). */
  enqueueAfter(key: K, ms: number): void {
    this.queue.addAfter(key, ms);
  }

  enqueueAll(): void {
    for (const key of this.options.keys()) this.queue.add(key);
  }

  /** True without a Lease; with one, while holding it. */
  isLeader(): boolean {
    return this.elector ? this.elector.isLeader() : true;
  }

  get identity(): string | undefined {
    return this.elector?.identity;
  }

  hasWatch(name: string): boolean {
    return this.declared.has(name);
  }

  /** Every named watch has completed a list (a watch not declared counts as not synced). */
  hasSynced(...names: string[]): boolean {
    return names.every((name) => this.declared.get(name)?.status().hasSynced === true);
  }

  status(): ControllerStatus {
    const watches = Object.fromEntries([...this.declared].map(([name, watch]) => [name, watch.status()]));
    const all = Object.values(watches);
    return { watches, synced: all.length > 0 && all.every((s) => s.hasSynced), leader: this.isLeader(), queued: this.queue.length };
  }

  async shutdown(): Promise<void> {
    clearInterval(this.resyncTimer);
    await this.queue.shutdown();
    await this.processing;
    await this.elector?.stop(); // releases the Lease: a standby takes over at once
    await Promise.all([...this.declared.values()].map((watch) => watch.stop()));
  }
}
