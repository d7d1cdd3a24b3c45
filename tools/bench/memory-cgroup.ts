import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const V1_ROOT = '/sys/fs/cgroup/memory';
const V2_ROOT = '/sys/fs/cgroup';
const PREFIX = 'outrigger-bench-';

/**
 * A memory cgroup with a limit, as a container's: a process started in it (see `command`) sees the
 * limit before Node sizes its heap, and is OOM-killed past it. cgroup v1 or v2, as the host has.
 */
export class MemoryCgroup {
  private constructor(
    readonly dir: string,
    private readonly v2: boolean,
  ) {}

  static create(limitBytes: number): MemoryCgroup {
    const v2 = !existsSync(V1_ROOT) && existsSync(join(V2_ROOT, 'cgroup.controllers'));
    const root = v2 ? V2_ROOT : V1_ROOT;
    if (!existsSync(root)) throw new Error(`no memory cgroup hierarchy at ${V1_ROOT} or ${V2_ROOT}; run with --memory-limit none`);
    // Groups a killed bench left behind, once empty.
    for (const stale of readdirSync(root).filter((d) => d.startsWith(PREFIX))) {
      try {
        rmdirSync(join(root, stale));
      } catch {
        // still has processes: not ours to touch
      }
    }
    const dir = join(root, `${PREFIX}${process.pid}-${Date.now()}`);
    mkdirSync(dir);
    writeFileSync(join(dir, v2 ? 'memory.max' : 'memory.limit_in_bytes'), String(limitBytes));
    return new MemoryCgroup(dir, v2);
  }

  /** `argv` wrapped so that it joins this cgroup first and then becomes the command (same PID). */
  command(argv: readonly string[]): string[] {
    return ['/bin/sh', '-c', 'echo $$ > "$0/cgroup.procs" && exec "$@"', this.dir, ...argv];
  }

  /** Processes the kernel's OOM killer ended in this cgroup. */
  oomKills(): number {
    const text = readFileSync(join(this.dir, this.v2 ? 'memory.events' : 'memory.oom_control'), 'utf8');
    return Number(/^oom_kill (\d+)$/m.exec(text)?.[1] ?? 0);
  }

  /** Removes the cgroup once its processes have ended. */
  remove(): void {
    rmdirSync(this.dir);
  }
}
