import { backoffDelay } from './backoff.js';

export interface WorkQueueOptions {
  /** First retry delay after a handler failure; 200 ms by default. */
  readonly baseDelayMs?: number;
  /** Retry delays stop growing here; 5 min by default. */
  readonly maxDelayMs?: number;
  /** Keys handled at the same time (never the same key twice at once); 1 by default. */
  readonly concurrency?: number;
  /** Told about every handler failure and when the key will be retried. */
  readonly onError?: (key: string, error: unknown, retryInMs: number) => void;
}

/** What a handler may ask for besides success: handle this key again later (grace periods, resync). */
export interface HandlerResult {
  readonly requeueAfterMs?: number;
}

export type KeyHandler = (key: string) => Promise<HandlerResult | void> | HandlerResult | void;

/**
 * A keyed work queue in the manner of client-go's: a key waits at most once however often it is
 * added; a key added while being handled is handled once more afterwards, never concurrently;
 * failures are retried with per-key exponential backoff that resets on success.
 */
export class WorkQueue {
  private readonly queue: string[] = [];
  /** Keys that need handling: waiting in `queue`, or added again while being handled. */
  private readonly dirty = new Set<string>();
  private readonly processing = new Set<string>();
  private readonly delayed = new Map<string, { at: number; timer: NodeJS.Timeout }>();
  private readonly failures = new Map<string, number>();
  private waiters: Array<() => void> = [];
  private shuttingDown = false;
  private running: Promise<void> | undefined;

  constructor(private readonly options: WorkQueueOptions = {}) {}

  /** Queues `key` unless it is already waiting. Ignored after shutdown. */
  add(key: string): void {
    if (this.shuttingDown || this.dirty.has(key)) return;
    this.dirty.add(key);
    if (this.processing.has(key)) return; // re-queued by done()
    this.queue.push(key);
    this.wakeOne();
  }

  /** Queues `key` after `ms`; of several pending delays for one key the earliest wins. */
  addAfter(key: string, ms: number): void {
    if (this.shuttingDown) return;
    if (ms <= 0) return this.add(key);
    const at = Date.now() + ms;
    const pending = this.delayed.get(key);
    if (pending && pending.at <= at) return;
    if (pending) clearTimeout(pending.timer);
    const timer = setTimeout(() => {
      this.delayed.delete(key);
      this.add(key);
    }, ms);
    this.delayed.set(key, { at, timer });
  }

  /** Queues `key` after its backoff delay and counts one more failure for it; returns the delay. */
  addRateLimited(key: string): number {
    const attempt = this.failures.get(key) ?? 0;
    this.failures.set(key, attempt + 1);
    const delay = backoffDelay(attempt, { baseMs: this.options.baseDelayMs ?? 200, maxMs: this.options.maxDelayMs ?? 300_000 });
    this.addAfter(key, delay);
    return delay;
  }

  /** Resets the backoff of `key` (done automatically after a successful handler run). */
  forget(key: string): void {
    this.failures.delete(key);
  }

  /** Failures of `key` since its last success. */
  retries(key: string): number {
    return this.failures.get(key) ?? 0;
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
  process(handler: KeyHandler): Promise<void> {
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

  private async work(handler: KeyHandler): Promise<void> {
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
  private async next(): Promise<string | undefined> {
    while (this.queue.length === 0) {
      if (this.shuttingDown) return undefined;
      await new Promise<void>((wake) => this.waiters.push(wake));
    }
    const key = this.queue.shift() as string;
    this.dirty.delete(key);
    this.processing.add(key);
    return key;
  }

  private done(key: string): void {
    this.processing.delete(key);
    if (this.dirty.has(key)) {
      this.queue.push(key);
      this.wakeOne();
    }
  }

  private wakeOne(): void {
    this.waiters.shift()?.();
  }
}
