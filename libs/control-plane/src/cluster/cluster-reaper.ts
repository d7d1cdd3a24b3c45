import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { repoRoot } from '../binaries.js';
import { processAlive } from '../managed-process.js';

/** The script a reaper runs (reap-cluster.ts); how `clusterReapers` tells a reaper from other processes. */
export const REAPER_SCRIPT = fileURLToPath(new URL('./reap-cluster.ts', import.meta.url));

/** What the reaper is told, by environment: not on its command line, where `clusterProcesses` would take it for part of the cluster. */
export interface ReaperTarget {
  /** The process that owns the cluster (the one that claimed `${dir}.pid`). */
  readonly owner: number;
  readonly dir: string;
  readonly binDir: string;
}

export const REAPER_ENV = { owner: 'OUTRIGGER_REAPER_OWNER', dir: 'OUTRIGGER_REAPER_DIR', binDir: 'OUTRIGGER_REAPER_BIN_DIR' } as const;

export type ReaperStep = 'wait' | 'leave' | 'reap';

/**
 * One look of the reaper: while its owner lives, wait; once the pid file names someone else or no
 * one (the owner stopped its cluster, or a later start claimed the host), leave; once the owner is
 * gone and still named, reap.
 */
export function reaperStep(owner: number, named: number | undefined, ownerAlive: boolean): ReaperStep {
  if (named !== owner) return 'leave';
  return ownerAlive ? 'wait' : 'reap';
}

/** The pid a cluster's pid file names, or undefined when there is none. */
export function pidFileOwner(dir: string): number | undefined {
  try {
    const pid = Number(readFileSync(`${dir}.pid`, 'utf8').trim());
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Starts a detached process that removes the cluster if its owner dies without stopping it (SIGKILL,
 * the OOM killer, or a test runner that exits on Ctrl-C without running its teardown). Its messages
 * go to this process's stderr.
 */
export function startReaper(target: ReaperTarget): void {
  if (!existsSync(REAPER_SCRIPT)) throw new Error(`the cluster's reaper ${REAPER_SCRIPT} is missing (the local cluster runs from source, with tsx)`);
  const env = { ...process.env, [REAPER_ENV.owner]: String(target.owner), [REAPER_ENV.dir]: target.dir, [REAPER_ENV.binDir]: target.binDir };
  spawn(process.execPath, ['--import', 'tsx', '--conditions', 'development', REAPER_SCRIPT], { cwd: repoRoot(), env, detached: true, stdio: ['ignore', 'ignore', 'inherit'] }).unref();
}

/** Live reapers on this host. */
export function clusterReapers(): number[] {
  return readdirSync('/proc').flatMap((entry) => {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || !processAlive(pid)) return [];
    try {
      return readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').includes(REAPER_SCRIPT) ? [pid] : [];
    } catch {
      return [];
    }
  });
}
