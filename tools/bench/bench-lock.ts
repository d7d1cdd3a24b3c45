import { spawnSync } from 'node:child_process';
import { openSync } from 'node:fs';

/** Two benches on one machine spoil each other's figures: each takes this lock for its whole run. */
export const BENCH_LOCK = '/tmp/outrigger-bench.lock';

const CONFLICT = 75;

/**
 * Takes the bench lock for the life of this process, waiting (and saying so) while another bench
 * holds it. flock(1) locks the open file description it inherits as fd 3, which this process keeps
 * open, so the kernel releases the lock when the process ends, however it ends; Node opens files
 * close-on-exec, so the servers a bench starts never hold it.
 */
export function holdBenchLock(path = BENCH_LOCK): void {
  const fd = openSync(path, 'a');
  const lock = (...flags: string[]) => spawnSync('flock', [...flags, '3'], { stdio: ['ignore', 'inherit', 'inherit', fd] });
  const first = lock('--nonblock', '--conflict-exit-code', String(CONFLICT));
  if (first.error) throw new Error(`cannot take the bench lock ${path}: ${first.error.message}`);
  if (first.status === 0) return;
  if (first.status !== CONFLICT) throw new Error(`cannot take the bench lock ${path}: flock exited with ${first.status}`);
  console.error(`waiting for another bench to finish: it holds ${path}`);
  const waited = lock();
  if (waited.status !== 0) throw new Error(`cannot take the bench lock ${path}: flock exited with ${waited.status}`);
}
