import type { Cluster } from '@outrigger/control-plane';

/**
 * Ties a foreground command's life to its cluster: Ctrl-C or SIGTERM (and the returned function,
 * on failure) stop the cluster, remove everything it created and exit with the given code.
 */
export function stopOnSignals(cluster: Cluster): (code: number) => Promise<void> {
  let stopping = false;
  const stop = async (code: number) => {
    if (stopping) return;
    stopping = true;
    console.log('\nstopping the cluster and removing everything it created');
    try {
      await cluster.stop();
      console.log('stopped; nothing left behind');
    } catch (error) {
      console.error((error as Error).message);
      code = 1;
    }
    process.exit(code);
  };
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => void stop(0));
  return stop;
}
