import { apiErrorFromStatus, classifyApiError, KubeApiError, type ApiErrorInfo, type KubeStatus } from './api-error.js';
import { Backoff, type BackoffOptions } from './backoff.js';
import { objectKey, type KubeObject } from './kube-object.js';
import type { KubeClient } from './kube-request.js';
import { listPages } from './list-pages.js';
import type { ProtobufSchema } from './protobuf-schema.js';
import { ProjectionStore, type ProjectionChange, type ProjectionStoreOptions } from './projection-store.js';
import { SharedInstances } from './shared-instances.js';
import { streamWatch, type WatchEvent } from './watch-stream.js';

export interface ReflectorOptions<P, V = never> {
  /** Collection path: `/api/v1/pods` (cluster-wide) or `/api/v1/namespaces/ns/pods`; see resourcePath(). */
  readonly path: string;
  /**
   * The small part of an object worth remembering, or undefined for objects of no interest
   * (they are then treated as absent). Only projections are stored, never whole objects. Receives
   * the raw JSON; note that list items carry no apiVersion/kind.
   */
  readonly project: (obj: KubeObject) => P | undefined;
  readonly labelSelector?: string;
  readonly fieldSelector?: string;
  /** Objects per list page; 500 by default. */
  readonly pageSize?: number;
  /**
   * Takes each complete state from a watch with `sendInitialEvents` (WatchList, KEP-3157) instead
   * of list pages: the API server streams the objects from its watch cache one at a time, so no
   * page is ever parsed at once. Falls back to pages for good when the server refuses it (the
   * WatchList feature gate is off).
   */
  readonly streamingList?: boolean;
  /**
   * Watches (and streaming lists) in protobuf, decoded with this schema to the JSON `project`
   * receives: for built-in kinds only. The API server encodes protobuf several times faster than
   * JSON, which is most of a cold start over 100 000s of pods. List pages stay JSON.
   */
  readonly protobuf?: ProtobufSchema;
  /**
   * A watch that delivers neither an event nor a bookmark for this long is taken for dead (half-open
   * connection, stuck proxy) and restarted. The apiserver sends bookmarks about once a minute,
   * so keep it well above that; 150 s by default.
   */
  readonly deadStreamTimeoutMs?: number;
  /**
   * Server-side lifetime of one watch request; the apiserver ends it cleanly and sends a
   * bookmark 2 s before. Random in 5–10 min by default (spreads reconnects, as client-go does).
   */
  readonly watchTimeoutSeconds?: number;
  /** Delay between attempts after errors; 1 s doubling to 30 s, 50 % jitter by default. */
  readonly backoff?: Partial<BackoffOptions>;
  /** Projection equality; updates that change nothing are not delivered. Deep equality by default. */
  readonly equals?: ProjectionStoreOptions<P>['equals'];
  /** Files each projection under keys within groups, counted as projections come and go; see indexKeys(). */
  readonly index?: ProjectionStoreOptions<P, V>['index'];
  /** Keeps one instance of projections with the same key; see ProjectionStoreOptions. */
  readonly share?: ProjectionStoreOptions<P>['share'];
  readonly onAdd?: (key: string, value: P) => void;
  readonly onUpdate?: (key: string, value: P, old: P) => void;
  readonly onDelete?: (key: string, old: P) => void;
  /** After every complete list (the first and each relist), once its differences were delivered. */
  readonly onSynced?: () => void;
  /** Every failure, before the retry; also a throwing callback (which does not stop the reflector). */
  readonly onError?: (error: unknown, info: ApiErrorInfo) => void;
}

export interface ReflectorStatus {
  /** A complete list has been delivered at least once. */
  readonly hasSynced: boolean;
  /**
   * The store matches the apiserver as of the last event: false from a list/watch failure until the
   * next successful list. While false, an absent key may be a delete we have not seen yet or an add
   * we missed: do not remove things because they are absent.
   */
  readonly viewComplete: boolean;
  /** Last event or bookmark from a watch. */
  readonly lastEventAt?: Date;
  /** Last complete list. */
  readonly lastSyncAt?: Date;
  /** Times the list-then-watch started over after a failure (including 410 Gone). */
  readonly restarts: number;
  /** Bookmarks received. */
  readonly bookmarks: number;
  /** 410 Gone answers (resourceVersion too old), each followed by a relist. */
  readonly gone: number;
  /** Where the next watch resumes. */
  readonly resourceVersion?: string;
  readonly lastError?: string;
}

const DEFAULT_BACKOFF: BackoffOptions = { baseMs: 1_000, maxMs: 30_000, jitter: 0.5 };
/** The annotation on the bookmark that ends a watch's initial events. */
const INITIAL_EVENTS_END = 'k8s.io/initial-events-end';
const INITIAL_EVENTS_ENDED = Symbol('initial events ended');

/**
 * A list-then-watch that never gives up: paginated list, watch from the list's resourceVersion
 * with bookmarks, relist on 410 Gone, restart with backoff after any error, restart a watch that
 * went silent. Keeps only projections, keyed `namespace/name`, and reports their adds, updates
 * and deletes, including deletes of objects that vanished while it was disconnected (found by
 * diffing each relist against the store).
 */
export class Reflector<P, V = never> {
  private readonly store: ProjectionStore<P, V>;
  private readonly backoff: Backoff;
  private state: { -readonly [K in keyof ReflectorStatus]: ReflectorStatus[K] } = {
    hasSynced: false,
    viewComplete: false,
    restarts: 0,
    bookmarks: 0,
    gone: 0,
  };
  private loop: Promise<void> | undefined;
  private stopped = false;
  private relistRequested = false;
  private current: AbortController | undefined;
  private wake: (() => void) | undefined;
  private deadTimer: NodeJS.Timeout | undefined;
  private firstSync: { promise: Promise<void>; resolve: () => void; reject: (e: Error) => void };
  private streamingRefused = false;

  constructor(
    private readonly kc: KubeClient,
    private readonly options: ReflectorOptions<P, V>,
  ) {
    this.store = new ProjectionStore({ equals: options.equals, index: options.index, share: options.share });
    this.backoff = new Backoff({ ...DEFAULT_BACKOFF, ...options.backoff });
    let resolve!: () => void;
    let reject!: (e: Error) => void;
    const promise = new Promise<void>((res, rej) => ((resolve = res), (reject = rej)));
    promise.catch(() => undefined); // nobody waiting is fine
    this.firstSync = { promise, resolve, reject };
  }

  start(): this {
    if (this.loop) throw new Error('Reflector already started');
    this.loop = this.run();
    return this;
  }

  /** Ends the watch and the retry loop; resolves when nothing runs any more. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.clearDeadTimer();
    this.current?.abort();
    this.wake?.();
    this.firstSync.reject(new Error(`reflector for ${this.options.path} stopped before its first sync`));
    await this.loop;
  }

  /**
   * Lists again from scratch, e.g. because what `project` computes has changed (new configuration);
   * the differences to the store are delivered as usual. Not an error: no backoff, no restart count.
   */
  relist(): void {
    if (!this.loop || this.stopped) return;
    this.relistRequested = true;
    this.clearDeadTimer();
    this.current?.abort(new Error('relist requested'));
    this.wake?.();
  }

  /** Resolves after the first complete list; rejects if stopped before. */
  whenSynced(): Promise<void> {
    return this.firstSync.promise;
  }

  status(): ReflectorStatus {
    return { ...this.state };
  }

  get(key: string): P | undefined {
    return this.store.get(key);
  }

  keys(): string[] {
    return this.store.keys();
  }

  entries(): Array<[string, P]> {
    return this.store.entries();
  }

  get size(): number {
    return this.store.size;
  }

  /** The keys of an index group (see ReflectorOptions.index) at least one stored projection carries. */
  indexKeys(group: string): IterableIterator<string> {
    return this.store.indexKeys(group);
  }

  /** The values the entries of an index group in use carry, each with how many stored projections carry it. */
  indexValues(group: string): IterableIterator<[V, number]> {
    return this.store.indexValues(group);
  }

  private async run(): Promise<void> {
    let consecutiveGone = 0;
    while (!this.stopped) {
      try {
        await this.listAndWatch();
      } catch (error) {
        this.clearDeadTimer();
        if (this.stopped) break;
        if (this.relistRequested) {
          this.relistRequested = false;
          continue;
        }
        const info = classifyApiError(error);
        this.state.viewComplete = false;
        this.state.restarts++;
        this.state.lastError = info.message;
        this.report(error, info);
        // Expired resourceVersion: our view is merely stale, relist at once (but back off if it repeats).
        consecutiveGone = info.kind === 'gone' ? consecutiveGone + 1 : 0;
        if (info.kind === 'gone') this.state.gone++;
        await this.sleep(consecutiveGone === 1 ? 0 : this.backoff.next());
      }
    }
  }

  private async listAndWatch(): Promise<void> {
    const { path, labelSelector, fieldSelector } = this.options;
    this.relistRequested = false;
    this.current = new AbortController();
    this.armDeadTimer(this.current); // a list can hang on a half-open connection too
    const next = new Map<string, P>();
    // Projections that share a key are held once already while the list is read, not once per object.
    const share = this.options.share;
    const shared = share ? new SharedInstances(share) : undefined;
    const collect = (obj: KubeObject) => {
      const value = this.project(obj);
      if (value === undefined) return;
      next.set(objectKey(obj), shared ? shared.hold(value) : value);
    };
    const resourceVersion =
      this.options.streamingList && !this.streamingRefused
        ? await this.streamInitialEvents(this.current, collect)
        : await listPages(this.kc, path, { labelSelector, fieldSelector, pageSize: this.options.pageSize, signal: this.current.signal }, collect);
    this.clearDeadTimer();
    if (this.stopped) return;
    this.deliver(this.store.replace(next));
    // This function goes on watching: the list's maps would otherwise live as long as the watch.
    next.clear();
    shared?.clear();
    Object.assign(this.state, { hasSynced: true, viewComplete: true, lastSyncAt: new Date(), resourceVersion });
    this.call(() => this.options.onSynced?.());
    this.firstSync.resolve();

    while (!this.stopped) {
      const controller = new AbortController();
      this.current = controller;
      this.armDeadTimer(controller);
      await streamWatch(
        this.kc,
        path,
        {
          resourceVersion: this.state.resourceVersion,
          allowWatchBookmarks: true,
          timeoutSeconds: this.watchTimeoutSeconds(),
          labelSelector,
          fieldSelector,
        },
        controller.signal,
        (event) => this.handle(event, controller),
        this.options.protobuf,
      );
      // The server ended the watch normally: resume from where we are, no relist needed.
      this.clearDeadTimer();
      this.backoff.reset();
    }
  }

  /**
   * A complete state from a watch with sendInitialEvents: ADDED events, then a bookmark marked as
   * their end, whose resourceVersion the next watch resumes from. Pages when the server refuses it.
   */
  private async streamInitialEvents(controller: AbortController, collect: (obj: KubeObject) => void): Promise<string> {
    const { path, labelSelector, fieldSelector } = this.options;
    let end: string | undefined;
    const query = { sendInitialEvents: true, resourceVersionMatch: 'NotOlderThan', allowWatchBookmarks: true, labelSelector, fieldSelector, timeoutSeconds: this.watchTimeoutSeconds() };
    try {
      await streamWatch(this.kc, path, query, controller.signal, (event) => {
        this.armDeadTimer(controller);
        if (event.type === 'ADDED') return collect(event.object);
        if (event.type === 'ERROR') throw apiErrorFromStatus(event.object as KubeStatus);
        if (event.type !== 'BOOKMARK' || event.object.metadata?.annotations?.[INITIAL_EVENTS_END] !== 'true') return;
        end = event.object.metadata.resourceVersion ?? '';
        throw INITIAL_EVENTS_ENDED; // the changes come from a watch of their own
      }, this.options.protobuf);
    } catch (error) {
      if (error === INITIAL_EVENTS_ENDED && end) return end;
      if (error instanceof KubeApiError && (error.code === 400 || error.code === 422) && !controller.signal.aborted) {
        this.streamingRefused = true;
        this.report(error, { ...classifyApiError(error), message: `the API server refused a streaming list of ${path} (${classifyApiError(error).message}); listing in pages from now on` });
        return listPages(this.kc, path, { labelSelector, fieldSelector, pageSize: this.options.pageSize, signal: controller.signal }, collect);
      }
      throw error;
    }
    throw new Error(`the streaming list of ${path} ended before its initial-events-end bookmark`);
  }

  private watchTimeoutSeconds(): number {
    return this.options.watchTimeoutSeconds ?? 300 + Math.floor(Math.random() * 300);
  }

  private handle(event: WatchEvent, controller: AbortController): void {
    this.state.lastEventAt = new Date();
    this.armDeadTimer(controller);
    this.backoff.reset(); // the connection demonstrably works
    const rv = event.object.metadata?.resourceVersion;
    switch (event.type) {
      case 'BOOKMARK':
        this.state.bookmarks++;
        break;
      case 'ADDED':
      case 'MODIFIED':
        this.deliver([this.store.set(objectKey(event.object), this.project(event.object))]);
        break;
      case 'DELETED':
        this.deliver([this.store.delete(objectKey(event.object))]);
        break;
      case 'ERROR':
        // Usually 410 Gone: the resourceVersion we resumed from was compacted away.
        throw apiErrorFromStatus(event.object as KubeStatus);
      default:
        return;
    }
    if (rv) this.state.resourceVersion = rv;
  }

  private project(obj: KubeObject): P | undefined {
    try {
      return this.options.project(obj);
    } catch (error) {
      this.report(error, { kind: 'unknown', message: `project() threw for ${objectKey(obj)}: ${String(error)}`, retryable: false });
      return undefined;
    }
  }

  private deliver(changes: ReadonlyArray<ProjectionChange<P> | undefined>): void {
    for (const change of changes) {
      if (!change) continue;
      if (change.type === 'add') this.call(() => this.options.onAdd?.(change.key, change.value));
      else if (change.type === 'update') this.call(() => this.options.onUpdate?.(change.key, change.value, change.old));
      else this.call(() => this.options.onDelete?.(change.key, change.old));
    }
  }

  /** A throwing consumer callback must not break the watch: report it and go on. */
  private call(callback: () => void): void {
    try {
      callback();
    } catch (error) {
      this.report(error, { kind: 'unknown', message: `reflector callback threw: ${String(error)}`, retryable: false });
    }
  }

  private report(error: unknown, info: ApiErrorInfo): void {
    try {
      this.options.onError?.(error, info);
    } catch {
      // a broken error handler must not break the loop either
    }
  }

  private armDeadTimer(controller: AbortController): void {
    this.clearDeadTimer();
    const timeoutMs = this.options.deadStreamTimeoutMs ?? 150_000;
    this.deadTimer = setTimeout(() => {
      const error = new Error(`no event or bookmark for ${timeoutMs / 1000}s on ${this.options.path}; restarting the watch`);
      error.name = 'TimeoutError';
      controller.abort(error);
    }, timeoutMs);
  }

  private clearDeadTimer(): void {
    clearTimeout(this.deadTimer);
    this.deadTimer = undefined;
  }

  private sleep(ms: number): Promise<void> {
    if (ms <= 0 || this.stopped) return Promise.resolve();
    return new Promise((done) => {
      const timer = setTimeout(done, ms);
      this.wake = () => {
        clearTimeout(timer);
        done();
      };
    });
  }
}
