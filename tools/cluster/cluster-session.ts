import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** What ends a foreground command: Ctrl-C, kill, and the terminal closing (SIGHUP). */
const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

type Say = (line: string, isError?: boolean) => void;

const toConsole: Say = (line, isError) => (isError ? console.error(line) : console.log(line));

/** A local cluster or bare control plane: its stop removes everything it created. */
interface Stoppable {
  /** The signal that ended the command, when it reached the components too. */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/**
 * Ties a foreground command's life to its cluster: Ctrl-C, SIGTERM or its terminal closing (and the
 * returned function, on failure) stop the cluster, remove everything it created and exit with the
 * given code. After a hangup, what the stop says also goes to `hangupLog`: nobody reads the terminal.
 */
export function stopOnSignals(cluster: Stoppable, hangupLog: string, what = 'the cluster'): (code: number) => Promise<void> {
  let stopping = false;
  let say = toConsole;
  const stop = async (code: number, signal?: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    say(`\nstopping ${what} and removing everything it created`);
    try {
      await cluster.stop(signal);
      say('stopped; nothing left behind');
    } catch (error) {
      say((error as Error).message, true);
      code = 1;
    }
    process.exit(code);
  };
  for (const signal of STOP_SIGNALS) {
    process.on(signal, () => {
      if (signal === 'SIGHUP' && say === toConsole) say = outliveTerminal(hangupLog);
      void stop(0, signal);
    });
  }
  return stop;
}

/**
 * After a hangup the terminal is gone: writing to it fails (EIO, EPIPE), which must not end the
 * teardown. The returned `say` writes to the terminal, if it is still there, and to `log`, started
 * afresh; a log that cannot be written does not stop the teardown either.
 */
function outliveTerminal(log: string): Say {
  for (const stream of [process.stdout, process.stderr]) stream.on('error', () => undefined);
  const write = (text: string, append: boolean) => {
    try {
      mkdirSync(dirname(log), { recursive: true });
      (append ? appendFileSync : writeFileSync)(log, text);
    } catch {
      // Nowhere left to say it; the exit code still tells.
    }
  };
  write(`${new Date().toISOString()} pid ${process.pid}: SIGHUP (the terminal closed)\n`, false);
  return (line, isError) => {
    toConsole(line, isError);
    write(`${line}\n`, true);
  };
}

/** Where a command that wrote `kubeconfig` says, after a hangup, how its stop went. */
export function hangupLog(kubeconfig: string): string {
  return join(dirname(kubeconfig), 'hangup.log');
}
