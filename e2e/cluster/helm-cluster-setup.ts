import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot, startCluster } from '@outrigger/control-plane';
import type { TestProject } from 'vitest/node';

/** Vitest globalSetup of the Helm suite: a real single-node cluster with nothing of Outrigger on it (the suite installs it with Helm). */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const artifactsDir = join(repoRoot(), 'tmp', 'cluster-e2e-helm');
  mkdirSync(artifactsDir, { recursive: true });
  const cluster = await startCluster({ log: (line) => process.stderr.write(`[cluster] ${line}\n`) });
  project.provide('cluster', { version: cluster.version, server: cluster.server, kubeconfigPath: cluster.kubeconfigPath, binDir: cluster.binDir, artifactsDir, ctr: cluster.ctr, registry: cluster.registry });
  return () => cluster.stop();
}
