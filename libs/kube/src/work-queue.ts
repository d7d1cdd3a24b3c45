import { backoffDelay } from './backoff.js';

export interface WorkQueueOptions<K = string> {
  /** First retry delay after a handler failure; 200 ms by default. */
  readonly baseDelayMs?: number;
  /** Retry delays stop growing here; 5 min by default. */
  readonly maxDelayMs?: number;
  /** Keys handled at the same time (never the same key twice at once); 1 by default. */
  readonly concurrency?: number;
  /** Told about every handler failure and when the key will be retried. */
  readonly onError?: (key: K, error: unknown, retryInMs: number) => void;
  /**
   * How keys are told apart: strings by themselves, any other key type by an identity derived from
   * it (required then); the queue hands the typed key back, never the identity.
   */
  readonly keyId?: (key: K) => string;
}

/** Options for keys of type K: `keyId` is required unless keys are strings. */
export type KeyedOptions<K, O extends { readonly keyId?: (key: K) => string }> = K extends string ? O : O & { readonly keyId: (key: K) => string };

/** What a handler may ask for besides success: handle this key again later (grace periods, resync). */
export interface HandlerResult {
  readonly requeueAfterMs?: number;
}

export type KeyHandler<K = string> = (key: K) => Promise<HandlerResult | void> | HandlerResult | void;

/**
 * A keyed work queue in the manner of client-go's: a key waits at most once however often it is
 * added; a key added while being handled is handled once more afterwards, never concurrently;
 * failures are retried with per-key exponential backoff that resets on success.
 */
export class WorkQueue<K = string> {
  private readonly queue: K[] = [];
  /** Identities of the keys that need handling: waiting in `queue`, or added again while being handled. */
  private readonly dirty = new Set<string>();
  private readonly processing = new Set<string>();
  private readonly delayed = new Map<string, { at: number; timer: NodeJS.Timeout }>();
  private readonly failures = new Map<string, number>();
  private readonly id: (key: K) => string;
  private waiters: Array<() => void> = [];
  private shuttingDown = false;
  private running: Promise<void> | undefined;

  private readonly options: WorkQueueOptions<K>;

  constructor(options?: KeyedOptions<K, WorkQueueOptions<K>>) {
    this.options = options ?? {};
    this.id = this.options.keyId ?? ((key) => String(key));
  }

  /** Queues `key` unless it is already waiting. Ignored after shutdown. */
  add(key: K): void {
    const id = this.id(key);
    if (this.shuttingDown || this.dirty.has(id)) return;
    this.dirty.add(id);
    if (this.processing.has(id)) return; // re-queued by done()
    this.queue.push(key);
    this.wakeOne();
  }

  /** Queues `key` after `ms`; of several pending delays for one key the earliest wins. */
  addAfter(key: K, ms: number): void {
    if (this.shuttingDown) return;
    if (ms <= 0) return this.add(key);
    const id = this.id(key);
    const at = Date.now() + ms;
    const pending = this.delayed.get(id);
    if (pending && pending.at <= at) return;
    if (pending) clearTimeout(pending.timer);
    const timer = setTimeout(() => {
      this.delayed.delete(id);
      this.add(key);
    }, ms);
    this.delayed.set(id, { at, timer });
  }

  /** Queues `key` after its backoff delay and counts one more failure for it; returns the delay. */
  addRateLimited(key: K): number {
    const id = this.id(key);
    const attempt = this.failures.get(id) ?? 0;
    this.failures.set(id, attempt + 1);
    const delay = backoffDelay(attempt, { baseMs: this.options.baseDelayMs ?? 200, maxMs: this.options.maxDelayMs ?? 300_000 });
    this.addAfter(key, delay);
    return delay;
  }

  /** Resets the backoff of `key` (done automatically after a successful handler run). */
  forget(key: K): void {
    this.failures.delete(this.id(key));
  }

  /** Failures of `key` since its last success. */
  retries(key: K): number {
    return this.failures.get(this.id(key)) ?? 0;
  }

  /** Keys waiting (not counting delayed ones or those being handled). */
  get length(): number {
    return this.queue.length;
  }

  get isShuttingDown(): boolean {
    return this.shuttingDown;
  }

  /**
   * Runs `handler` for queued keys with the configured concurrency until shutdown. A throw
   * re-queues the key with backoff; a returned `requeueAfterMs` schedules it again. Resolves
   * when shut down and drained.
   */
  process(handler: KeyHandler<K>): Promise<void> {
    if (this.running) throw new Error('WorkQueue.process() may only be called once');
    const workers = Array.from({ length: Math.max(1, this.options.concurrency ?? 1) }, () => this.work(handler));
    this.running = Promise.all(workers).then(() => undefined);
    return this.running;
  }

  /**
   * Stops accepting keys, drops delayed ones, lets the workers finish what is queued and in
   * flight (failures are no longer retried), and resolves when they have.
   */
  async shutdown(): Promise<void> {
    this.shuttingDown = true;
    for (const { timer } of this.delayed.values()) clearTimeout(timer);
    this.delayed.clear();
    const waiters = this.waiters;
    this.waiters = [];
    waiters.forEach((wake) => wake());
    await this.running;
  }

  private async work(handler: KeyHandler<K>): Promise<void> {
    for (let key = await this.next(); key !== undefined; key = await this.next()) {
      try {
        const result = await handler(key);
        this.forget(key);
        if (result?.requeueAfterMs !== undefined) this.addAfter(key, result.requeueAfterMs);
      } catch (error) {
        const retryIn = this.shuttingDown ? -1 : this.addRateLimited(key);
        this.options.onError?.(key, error, retryIn);
      } finally {
        this.done(key);
      }
    }
  }

  /** The next key to handle, or undefined once shut down and empty. */
  private async next(): Promise<K | undefined> {
    while (this.queue.length === 0) {
      if (this.shuttingDown) return undefined;
      await new Promise<void>((wake) => this.waiters.push(wake));
    }
    const key = this.queue.shift() as K;
    const id = this.id(key);
    this.dirty.delete(id);
    this.processing.add(id);
    return key;
  }

  private done(key: K): void {
    const id = this.id(key);
    this.processing.delete(id);
    if (this.dirty.has(id)) {
      this.queue.push(key);
      this.wakeOne();
    }
  }

  private wakeOne(): void {
    this.waiters.shift()?.();
  }
}
