import { cpSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { repoRoot } from '../binaries.js';
import { startCluster, type Cluster } from './cluster.js';
import type { LocalRegistry } from './local-registry.js';
import { installOutrigger, INSTALL_NAMESPACE, pushOutriggerImages } from './outrigger-install.js';

export interface ProvidedCluster {
  readonly version: string;
  readonly server: string;
  readonly kubeconfigPath: string;
  readonly binDir: string;
  /** Where the suite keeps what it collects (component logs, events): tmp/cluster-e2e. */
  readonly artifactsDir: string;
  /** The node's containerd CLI, as a command line (see Cluster.ctr). */
  readonly ctr: readonly string[];
  /** The node's registries (credentials of the private one included). */
  readonly registry: LocalRegistry;
  /** The overlay installed, when the suite installs Outrigger: the local one with the services pinned to the digests pushed (its digests.env beside it). */
  readonly pinnedInstallDir?: string;
}

declare module 'vitest' {
  export interface ProvidedContext {
    cluster: ProvidedCluster;
  }
}

/**
 * Vitest globalSetup: one real single-node cluster per run with Outrigger installed from
 * deploy/overlays/local, exactly as a user installs it: its services' images pushed to the cluster's
 * registry and pulled from there by digest. Teardown fails the run if anything of the
 * cluster is left on the host.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const log = (line: string) => process.stderr.write(`[cluster] ${line}\n`);
  const artifactsDir = join(repoRoot(), 'tmp', 'cluster-e2e');
  mkdirSync(artifactsDir, { recursive: true });
  const cluster = await startCluster({ log });
  let pinnedInstallDir: string;
  try {
    pinnedInstallDir = await pushOutriggerImages(cluster, log);
    await installOutrigger(cluster, log, pinnedInstallDir);
  } catch (error) {
    collect(cluster, artifactsDir);
    await cluster.stop();
    throw error;
  }
  project.provide('cluster', { version: cluster.version, server: cluster.server, kubeconfigPath: cluster.kubeconfigPath, binDir: cluster.binDir, artifactsDir, ctr: cluster.ctr, registry: cluster.registry, pinnedInstallDir });
  return async () => {
    collect(cluster, artifactsDir);
    await cluster.stop();
  };
}

/** Keeps the components' logs, the events and Outrigger's pod logs for a look after the run. */
function collect(cluster: Cluster, dir: string): void {
  for (const file of readdirSync(cluster.dir).filter((f) => f.endsWith('.log'))) cpSync(join(cluster.dir, file), join(dir, file));
  const save = (name: string, args: readonly string[]) => {
    try {
      writeFileSync(join(dir, name), cluster.kubectl(args));
    } catch (error) {
      writeFileSync(join(dir, name), (error as Error).message);
    }
  };
  save('events.txt', ['get', 'events', '-A', '--sort-by=.lastTimestamp']);
  save('pods.txt', ['get', 'pods', '-A', '-o', 'wide']);
  save('outrigger-logs.txt', ['logs', '-n', INSTALL_NAMESPACE, '-l', 'app.kubernetes.io/part-of=outrigger', '--all-containers', '--prefix', '--tail=-1']);
}
