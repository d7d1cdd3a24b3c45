import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { type KubeClient, loadKubeClient } from '@outrigger/kube';

/** The cluster as kubectl would pick it: --kubeconfig, $KUBECONFIG, ~/.kube/config, in-cluster. */
export function cliKubeClient(kubeconfig: string | undefined): KubeClient {
  const home = join(homedir(), '.kube', 'config');
  return loadKubeClient(kubeconfig ?? process.env['KUBECONFIG'] ?? (existsSync(home) ? home : undefined));
}
