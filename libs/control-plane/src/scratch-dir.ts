import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';

export interface ScratchDir {
  readonly dir: string;
  /** Removes the directory, or keeps it and says why: a failed run's logs are worth reading, and a mount inside is not ours to delete through. */
  finish(failed: boolean): ScratchOutcome;
}

export type ScratchOutcome = { readonly kept: false } | { readonly kept: true; readonly why: string };

/** Mount points at or under `dir`, from /proc/self/mountinfo (field 5 is the mount point, octal-escaped). */
export function mountsUnder(dir: string, mountinfo = readFileSync('/proc/self/mountinfo', 'utf8')): string[] {
  const points = mountinfo
    .split('\n')
    .map((line) => line.split(' ')[4])
    .filter((p): p is string => p !== undefined)
    .map((p) => p.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8))));
  return points.filter((p) => p === dir || p.startsWith(`${dir}/`));
}

/** A fresh directory under `parent` for one test run's temporary files. */
export function scratchDir(parent: string, prefix: string): ScratchDir {
  const dir = mkdtempSync(join(parent, prefix));
  return {
    dir,
    finish(failed) {
      if (failed) return { kept: true, why: `the run failed: its temporary files are kept in ${dir}` };
      const mounts = mountsUnder(dir);
      if (mounts.length > 0) return { kept: true, why: `${dir} is kept: something is still mounted in it (${mounts.join(', ')})` };
      rmSync(dir, { recursive: true, force: true });
      return { kept: false };
    },
  };
}

/** A script's scratch directory: removed when the process exits with 0, kept (and its path printed) otherwise. */
export function scratchDirUntilExit(parent: string, prefix: string): string {
  const scratch = scratchDir(parent, prefix);
  process.once('exit', (code) => {
    const outcome = scratch.finish(code !== 0);
    if (outcome.kept) console.error(outcome.why);
  });
  return scratch.dir;
}
