import { existsSync, readdirSync, readFileSync, rmdirSync } from 'node:fs';
import { join } from 'node:path';
import { CLUSTER_NETWORK as NET } from './cluster-network.js';
import { host, tryHost } from './host-command.js';

const CGROUP_FS = '/sys/fs/cgroup';

/**
 * Processes of the cluster: every process whose command line names the cluster's directory (the
 * components, containerd's shims) and every process in a pod's cgroup (the containers).
 */
export function clusterProcesses(dir: string): number[] {
  const pids = new Set<number>();
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(dir)) pids.add(pid);
    } catch {
      // exited while we looked
    }
  }
  for (const cgroup of cgroupDirs()) {
    const procs = join(cgroup, 'cgroup.procs');
    if (!existsSync(procs)) continue;
    for (const line of readFileSync(procs, 'utf8').split('\n')) if (line) pids.add(Number(line));
  }
  pids.delete(process.pid);
  return [...pids];
}

/** SIGKILLs what is left of the cluster's processes, until none is (containers may fork while we kill). */
export async function killClusterProcesses(dir: string): Promise<void> {
  for (let round = 0; round < 20; round++) {
    const pids = clusterProcesses(dir);
    if (pids.length === 0) return;
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** Mount points below `dir` (kubelet volumes, container root filesystems, network namespaces), deepest first. */
export function mountsUnder(dir: string): string[] {
  return readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((line) => line.split(' ')[4] ?? '')
    .map((escaped) => escaped.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8))))
    .filter((point) => point === dir || point.startsWith(`${dir}/`))
    .sort((a, b) => b.length - a.length);
}

export function unmountUnder(dir: string): void {
  // A mount may be stacked several times (kubelet bind-mounts its root onto itself): repeat until clean.
  for (let round = 0; round < 10; round++) {
    const points = mountsUnder(dir);
    if (points.length === 0) return;
    for (const point of points) if (!tryHost('umount', [point])) tryHost('umount', ['-l', point]);
  }
  const left = mountsUnder(dir);
  if (left.length > 0) throw new Error(`could not unmount ${left.join(', ')}`);
}

/** The pods' cgroups below kubelet's cgroupRoot in every hierarchy, deepest first. */
export function cgroupDirs(): string[] {
  if (!existsSync(CGROUP_FS)) return [];
  const found: string[] = [];
  const walk = (path: string) => {
    for (const entry of readdirSync(path, { withFileTypes: true })) if (entry.isDirectory()) walk(join(path, entry.name));
    found.push(path);
  };
  for (const hierarchy of readdirSync(CGROUP_FS)) {
    const root = join(CGROUP_FS, hierarchy, NET.cgroupRoot);
    if (existsSync(root)) walk(root);
  }
  return found;
}

export function removeCgroups(): void {
  for (const path of cgroupDirs()) {
    try {
      rmdirSync(path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw new Error(`could not remove cgroup ${path}: ${(error as Error).message}`, { cause: error });
    }
  }
}

/** Creates kubelet's cgroupRoot in every hierarchy (kubelet requires it to exist). */
export function createCgroupRoot(): void {
  for (const hierarchy of readdirSync(CGROUP_FS)) {
    const path = join(CGROUP_FS, hierarchy);
    if (existsSync(join(path, 'cgroup.procs'))) host('mkdir', ['-p', join(path, NET.cgroupRoot)]);
  }
}

/** veth interfaces (the host ends of pod interfaces) that outlived their bridge. */
export function vethInterfaces(): string[] {
  return host('ip', ['-o', 'link', 'show', 'type', 'veth'])
    .split('\n')
    .filter(Boolean)
    .map((line) => (line.split(': ')[1] ?? '').split('@')[0] ?? '');
}
