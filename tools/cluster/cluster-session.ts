import type { Cluster } from '@outrigger/control-plane';

/** What ends a foreground command: Ctrl-C, kill, and the terminal closing (SIGHUP). */
export const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/**
 * Ties a foreground command's life to its cluster: Ctrl-C, SIGTERM or its terminal closing (and the
 * returned function, on failure) stop the cluster, remove everything it created and exit with the
 * given code.
 */
export function stopOnSignals(cluster: Cluster): (code: number) => Promise<void> {
  let stopping = false;
  const stop = async (code: number, signal?: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    console.log('\nstopping the cluster and removing everything it created');
    try {
      await cluster.stop(signal);
      console.log('stopped; nothing left behind');
    } catch (error) {
      console.error((error as Error).message);
      code = 1;
    }
    process.exit(code);
  };
  for (const signal of STOP_SIGNALS) {
    process.on(signal, () => {
      if (signal === 'SIGHUP') outliveTerminal();
      void stop(0, signal);
    });
  }
  return stop;
}

/** After a hangup the terminal is gone: writing to it fails (EIO, EPIPE), which must not end the teardown. */
export function outliveTerminal(): void {
  for (const stream of [process.stdout, process.stderr]) stream.on('error', () => undefined);
}
