import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';

const live = new Set<ManagedProcess>();
// A normal exit (tests done, uncaught error) must not leave servers behind.
process.on('exit', () => live.forEach((p) => p.killNow()));

/**
 * A child process we own: output to a log file, stopped by PID, and a watchdog that kills it if
 * this process dies without cleaning up (SIGKILL, OOM), so no control plane is ever orphaned.
 */
export class ManagedProcess {
  private readonly child: ChildProcess;
  private readonly exited: Promise<number | null>;

  constructor(
    readonly name: string,
    command: string,
    args: readonly string[],
    readonly logFile: string,
    env: NodeJS.ProcessEnv = process.env,
  ) {
    const fd = openSync(logFile, 'a');
    this.child = spawn(command, args, { stdio: ['ignore', fd, fd], env });
    closeSync(fd);
    this.exited = new Promise((done) => this.child.once('exit', (code) => done(code)));
    this.exited.then(() => live.delete(this));
    live.add(this);
    startWatchdog(this.pid);
  }

  get pid(): number {
    if (this.child.pid === undefined) throw new Error(`${this.name} did not start`);
    return this.child.pid;
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Resolves with the exit code when the process ends by itself. */
  whenExited(): Promise<number | null> {
    return this.exited;
  }

  async stop(graceMs = 5_000): Promise<void> {
    if (!this.running) return;
    process.kill(this.pid, 'SIGTERM');
    const timer = setTimeout(() => this.killNow(), graceMs);
    await this.exited;
    clearTimeout(timer);
  }

  killNow(): void {
    if (this.running) process.kill(this.pid, 'SIGKILL');
  }

  /** Its log's last lines, for an error that outlives the log (a failed start removes its directory). */
  logTail(lines = 15): string {
    try {
      const text = readFileSync(this.logFile, 'utf8').trimEnd();
      return text ? text.split('\n').slice(-lines).map((line) => `  | ${line}`).join('\n') : '  | (its log is empty)';
    } catch (error) {
      return `  | (its log is unreadable: ${(error as Error).message})`;
    }
  }
}

// `/proc/<pid>/stat` of a zombie: "<pid> (<comm>) Z ...".
const ZOMBIE_STAT = /^\d+ \(.*\) Z/;

/**
 * Whether a process is running. A zombie (exited, not yet reaped, which is what an orphan stays
 * when PID 1 does not reap, as in many containers) still answers kill(pid, 0): read its state.
 */
export function processAlive(pid: number): boolean {
  try {
    return !ZOMBIE_STAT.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

function startWatchdog(childPid: number): void {
  const script = `
    const [parent, child] = process.argv.slice(1).map(Number);
    const fs = require('node:fs');
    const alive = (pid) => { try { return !${ZOMBIE_STAT}.test(fs.readFileSync('/proc/' + pid + '/stat', 'utf8')); } catch { return false; } };
    setInterval(() => {
      if (!alive(child)) process.exit(0);
      if (!alive(parent)) { try { process.kill(child, 'SIGKILL'); } catch {} process.exit(0); }
    }, 500);`;
  spawn(process.execPath, ['-e', script, String(process.pid), String(childPid)], { detached: true, stdio: 'ignore' }).unref();
}
