import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

const CLOCK_TICKS = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }));

/** CPU time (user + system, ms) a process has used, from /proc: each server's own cost, whatever else shares the CPUs. */
export function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /, '').split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
}

/** A `kB` field of /proc/<pid>/status (`VmRSS`, `VmHWM`), in bytes. */
export function procStatusBytes(pid: number, field: string): number {
  const kb = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return Number(kb ?? 0) * 1024;
}

/** The PID of the one process whose command line contains every part (processes started elsewhere, e.g. by the control-plane lib). */
export function findPid(...parts: readonly string[]): number {
  const found = readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
        return parts.every((part) => cmdline.includes(part));
      } catch {
        return false;
      }
    });
  if (found.length !== 1) throw new Error(`expected one process with ${parts.join(' and ')} in its command line, found ${found.length}`);
  return Number(found[0]);
}
