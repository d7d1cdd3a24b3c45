import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export interface Stall {
  /** Epoch ms at which the timer should have fired. */
  readonly at: number;
  /** How late it fired, in ms. */
  readonly lateMs: number;
}

/** Stalls shorter than this are not recorded: Node's timers are whole milliseconds anyway. */
const RECORDED_MS = 2;

/**
 * An idle process that only measures how late its own 1 ms timer fires. It does no work, so when
 * it is late the machine did not run it: the server and the sender are the only other load, and
 * they leave one of the two CPUs free most of the time. Run beside a latency measurement, it tells
 * windows in which the machine stalled from ones in which only the server did.
 */
export async function startStallCanary(): Promise<{ stop(): Promise<Stall[]> }> {
  const child = fork(fileURLToPath(import.meta.url), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  await new Promise<void>((resolve, reject) => {
    child.once('message', () => resolve());
    child.once('error', reject);
  });
  return {
    stop: () =>
      new Promise((resolve, reject) => {
        child.once('message', (stalls) => resolve(stalls as Stall[]));
        child.once('error', reject);
        child.send('stop');
      }),
  };
}

/** Stalls in [from, to] (epoch ms): how many went past `overMs`, and the longest. */
export function stallsBetween(stalls: readonly Stall[], from: number, to: number, overMs: number): { count: number; maxMs: number } {
  const inWindow = stalls.filter((s) => s.at >= from && s.at <= to);
  return { count: inWindow.filter((s) => s.lateMs > overMs).length, maxMs: Math.max(0, ...inWindow.map((s) => s.lateMs)) };
}

// Child mode: measure until the parent says stop, answer with the stalls, exit.
if (process.argv[1] === fileURLToPath(import.meta.url) && process.send) {
  const stalls: Stall[] = [];
  let last = performance.now();
  const timer = setInterval(() => {
    const now = performance.now();
    const lateMs = now - last - 1;
    if (lateMs > RECORDED_MS) stalls.push({ at: performance.timeOrigin + last + 1, lateMs });
    last = now;
  }, 1);
  process.on('message', () => {
    clearInterval(timer);
    process.send?.(stalls, () => process.exit(0));
  });
  // The parent went away without asking (it failed): no orphan left ticking.
  process.on('disconnect', () => process.exit(0));
  process.send('ready');
}
