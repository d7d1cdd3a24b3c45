import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { WorkQueue } from './work-queue.js';

/** A promise the test resolves by hand, to hold a handler mid-flight. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

/** Lets queued microtasks (handler continuations) run. */
const settle = () => vi.advanceTimersByTimeAsync(0);

describe('WorkQueue', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('handles a key once however often it was added while waiting, in FIFO order', async () => {
    const queue = new WorkQueue();
    queue.add('a');
    queue.add('b');
    queue.add('a');
    expect(queue.length).toBe(2);
    const seen: string[] = [];
    const done = queue.process((key) => void seen.push(key));
    await settle();
    expect(seen).toEqual(['a', 'b']);
    await queue.shutdown();
    await done;
  });

  it('tells typed keys apart by their identity and hands back the typed key', async () => {
    type Key = { readonly profile: string; readonly namespace?: string };
    const queue = new WorkQueue<Key>({ keyId: (key) => JSON.stringify([key.profile, key.namespace ?? null]) });
    queue.add({ profile: 'p', namespace: 'a' });
    queue.add({ profile: 'p' });
    queue.add({ profile: 'p', namespace: 'a' });
    expect(queue.length).toBe(2);
    const seen: Key[] = [];
    const done = queue.process((key) => void seen.push(key));
    await settle();
    expect(seen).toEqual([{ profile: 'p', namespace: 'a' }, { profile: 'p' }]);
    await queue.shutdown();
    await done;
  });

  it('handles a key added during its handling once more afterwards, never concurrently', async () => {
    const queue = new WorkQueue({ concurrency: 4 });
    const first = gate();
    const seen: string[] = [];
    let inFlight = 0;
    let maxInFlight = 0;
    void queue.process(async (key) => {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      seen.push(key);
      if (seen.length === 1) await first.opened;
      inFlight--;
    });
    queue.add('a');
    await settle();
    queue.add('a');
    queue.add('a');
    await settle();
    expect(seen).toEqual(['a']); // still in the first run
    first.open();
    await settle();
    expect(seen).toEqual(['a', 'a']);
    expect(maxInFlight).toBe(1);
    await queue.shutdown();
  });

  it('handles different keys concurrently up to the configured concurrency', async () => {
    const queue = new WorkQueue({ concurrency: 2 });
    const hold = gate();
    let inFlight = 0;
    let maxInFlight = 0;
    void queue.process(async () => {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      await hold.opened;
      inFlight--;
    });
    ['a', 'b', 'c'].forEach((k) => queue.add(k));
    await settle();
    expect(maxInFlight).toBe(2);
    hold.open();
    await queue.shutdown();
    expect(inFlight).toBe(0);
  });

  it('retries a failing key with growing per-key backoff and resets it after success', async () => {
    const errors: Array<[string, number]> = [];
    const queue = new WorkQueue({ baseDelayMs: 100, maxDelayMs: 1_000, onError: (key, _e, retryIn) => errors.push([key, retryIn]) });
    let failuresLeft = 3;
    const attempts: number[] = [];
    void queue.process((key) => {
      attempts.push(Date.now());
      if (key === 'a' && failuresLeft-- > 0) throw new Error('not yet');
    });
    const start = Date.now();
    queue.add('a');
    await settle();
    expect(errors).toEqual([['a', 100]]);
    await vi.advanceTimersByTimeAsync(99);
    expect(attempts).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(attempts).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(200);
    await vi.advanceTimersByTimeAsync(400);
    expect(attempts.map((t) => t - start)).toEqual([0, 100, 300, 700]);
    expect(errors.map(([, d]) => d)).toEqual([100, 200, 400]);
    expect(queue.retries('a')).toBe(0);
    await queue.shutdown();
  });

  it('caps the backoff at the maximum', async () => {
    const delays: number[] = [];
    const queue = new WorkQueue({ baseDelayMs: 100, maxDelayMs: 250, onError: (_k, _e, d) => delays.push(d) });
    void queue.process(() => {
      throw new Error('always');
    });
    queue.add('a');
    await vi.advanceTimersByTimeAsync(2_000);
    expect(delays.slice(0, 5)).toEqual([100, 200, 250, 250, 250]);
    await queue.shutdown();
  });

  it('addAfter delays a key and the earliest of several delays wins', async () => {
    const queue = new WorkQueue();
    const seen: number[] = [];
    void queue.process(() => void seen.push(Date.now()));
    const start = Date.now();
    queue.addAfter('a', 5_000);
    queue.addAfter('a', 1_000);
    queue.addAfter('a', 3_000);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(seen.map((t) => t - start)).toEqual([1_000]);
    await queue.shutdown();
  });

  it('requeues after the delay a handler asks for (periodic resync, grace periods)', async () => {
    const queue = new WorkQueue();
    const seen: number[] = [];
    void queue.process(() => {
      seen.push(Date.now());
      return seen.length < 3 ? { requeueAfterMs: 500 } : undefined;
    });
    const start = Date.now();
    queue.add('a');
    await vi.advanceTimersByTimeAsync(5_000);
    expect(seen.map((t) => t - start)).toEqual([0, 500, 1_000]);
    await queue.shutdown();
  });

  it('shutdown finishes queued and in-flight work, drops delayed keys and ignores new ones', async () => {
    const queue = new WorkQueue();
    const hold = gate();
    const seen: string[] = [];
    const running = queue.process(async (key) => {
      seen.push(key);
      if (key === 'a') await hold.opened;
    });
    queue.add('a');
    queue.add('b');
    queue.addAfter('later', 100);
    await settle();
    const stopped = queue.shutdown();
    queue.add('c');
    hold.open();
    await stopped;
    await running;
    await vi.advanceTimersByTimeAsync(1_000);
    expect(seen).toEqual(['a', 'b']);
    expect(queue.isShuttingDown).toBe(true);
  });

  it('does not retry failures once shutting down', async () => {
    const errors: number[] = [];
    const queue = new WorkQueue({ onError: (_k, _e, retryIn) => errors.push(retryIn) });
    const hold = gate();
    void queue.process(async () => {
      await hold.opened;
      throw new Error('late failure');
    });
    queue.add('a');
    await settle();
    const stopped = queue.shutdown();
    hold.open();
    await stopped;
    expect(errors).toEqual([-1]);
  });

  it('refuses a second process loop', () => {
    const queue = new WorkQueue();
    void queue.process(() => undefined);
    expect(() => queue.process(() => undefined)).toThrow(/once/);
    void queue.shutdown();
  });
});
