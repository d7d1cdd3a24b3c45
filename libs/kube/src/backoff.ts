export interface BackoffOptions {
  /** First delay. */
  readonly baseMs: number;
  /** Delays never exceed this (before jitter). */
  readonly maxMs: number;
  /** Growth per failure; 2 by default. */
  readonly factor?: number;
  /**
   * Fraction of the delay that is randomised, 0..1: the delay is drawn from
   * [d·(1−jitter), d]. Spreads reconnecting clients after an apiserver restart. 0 by default.
   */
  readonly jitter?: number;
  /** Source of randomness in [0, 1); Math.random by default (injectable for tests). */
  readonly random?: () => number;
}

/** Delay before retry number `attempt` (0-based): base·factor^attempt capped at max, then jittered. */
export function backoffDelay(attempt: number, options: BackoffOptions): number {
  const factor = options.factor ?? 2;
  const raw = Math.min(options.maxMs, options.baseMs * Math.pow(factor, Math.max(0, attempt)));
  const jitter = Math.min(1, Math.max(0, options.jitter ?? 0));
  if (jitter === 0) return raw;
  return raw * (1 - jitter * (options.random ?? Math.random)());
}

/** Counts consecutive failures; `next()` gives the delay to wait, `reset()` after a success. */
export class Backoff {
  private failures = 0;

  constructor(private readonly options: BackoffOptions) {}

  /** The delay before the next attempt; each call counts one more failure. */
  next(): number {
    return backoffDelay(this.failures++, this.options);
  }

  reset(): void {
    this.failures = 0;
  }

  get attempts(): number {
    return this.failures;
  }
}
