import { spawn } from 'node:child_process';
import { join, resolve } from 'node:path';
import { repoRoot } from '../binaries.js';
import type { Cluster } from './cluster.js';

// libs/install's INSTALL_NAMES, which this harness cannot import (libs/kube's e2e suites use it:
// a cycle); deploy/tests/install-names.spec.ts holds these equal to them.
export const INSTALL_NAMESPACE = 'outrigger-system';
export const INJECTOR_NAME = 'outrigger-injector';
export const LOCAL_OVERLAY = 'deploy/overlays/local';
/** Installed (and Established) first: the overlays hold AgentProfiles, which need their CRD. */
export const CRD_KUSTOMIZATION = 'deploy/base/crd';
export const AGENT_PROFILE_CRD = 'customresourcedefinitions/agentprofiles.outrigger.dev';
const INJECTOR_READYZ = `/api/v1/namespaces/${INSTALL_NAMESPACE}/services/https:${INJECTOR_NAME}:443/proxy/readyz`;

/**
 * Installs Outrigger as a user would (`kubectl apply -k` of an overlay) and waits until every
 * Deployment is available, the webhook has its caBundle and the injector answers through its Service.
 */
export async function installOutrigger(cluster: Cluster, log: (line: string) => void, overlay = LOCAL_OVERLAY): Promise<void> {
  log(`kubectl apply -k ${CRD_KUSTOMIZATION}`);
  await cluster.kubectlAsync(['apply', '--server-side', '-k', join(repoRoot(), CRD_KUSTOMIZATION)]);
  await crdEstablished(cluster, AGENT_PROFILE_CRD);
  log(`kubectl apply -k ${overlay}`);
  await cluster.kubectlAsync(['apply', '--server-side', '-k', resolve(repoRoot(), overlay)]);
  await waitForOutrigger(cluster, log);
}

/** The services' images, pushed to the cluster's registry: `npm run images:push` does it, as a user would. */
export const PUSHED_SERVICES = ['injector', 'rbac-syncer', 'cert-manager'] as const;

/**
 * Pushes the services' images to the cluster's open registry (tools/images/push.ts) and resolves
 * with the overlay it renders: the local overlay with the services run by digest, pulled Always.
 */
export function pushOutriggerImages(cluster: Cluster, log: (line: string) => void): Promise<string> {
  const out = join(cluster.dir, 'pinned-install');
  const args = ['--registry', `${cluster.registry.address}/outrigger`, '--tag', 'local', '--cert-dir', cluster.registry.certDir, '--base', LOCAL_OVERLAY, '--only', PUSHED_SERVICES.join(','), '--out', out];
  log(`npm run images:push -- ${args.join(' ')}`);
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, ['--import', 'tsx', '--conditions', 'development', 'tools/images/push.ts', ...args], { cwd: repoRoot(), stdio: ['ignore', 'ignore', 'pipe'] });
    child.stderr.on('data', (chunk: Buffer) => chunk.toString().split('\n').filter(Boolean).forEach(log));
    child.on('error', fail);
    child.on('exit', (code) => (code === 0 ? done(out) : fail(new Error(`tools/images/push.ts failed with exit code ${code}; see its output above`))));
  });
}

/**
 * Resolves once the CRD is Established, polling its condition: `kubectl wait` right after the
 * apply may answer NotFound from a lagging cache on a loaded API server.
 */
export async function crdEstablished(cluster: Cluster, crd: string, timeoutSeconds = 60): Promise<void> {
  const deadline = Date.now() + timeoutSeconds * 1000;
  let last = '';
  while (Date.now() < deadline) {
    try {
      last = await cluster.kubectlAsync(['get', crd, '-o', 'jsonpath={.status.conditions[?(@.type=="Established")].status}']);
      if (last.trim() === 'True') return;
    } catch (error) {
      last = error instanceof Error ? error.message : String(error);
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(`${crd} not Established after ${timeoutSeconds} s: ${last}`);
}

export async function waitForOutrigger(cluster: Cluster, log: (line: string) => void, timeoutSeconds = 300): Promise<void> {
  log('waiting for the Deployments to be available and the webhook to answer');
  const deadline = Date.now() + timeoutSeconds * 1000;
  let last = '';
  while (Date.now() < deadline) {
    try {
      const deployments = JSON.parse(await cluster.kubectlAsync(['get', 'deployments', '-n', INSTALL_NAMESPACE, '-o', 'json'])) as DeploymentList;
      const waiting = deployments.items.filter((d) => (d.status.updatedReplicas ?? 0) < d.spec.replicas || (d.status.availableReplicas ?? 0) < d.spec.replicas);
      if (deployments.items.length === 0 || waiting.length > 0) throw new Error(`not yet available: ${waiting.map((d) => d.metadata.name).join(', ') || 'no Deployments'}`);
      const caBundle = await cluster.kubectlAsync(['get', 'mutatingwebhookconfiguration', INJECTOR_NAME, '-o', 'jsonpath={.webhooks[0].clientConfig.caBundle}']);
      if (!caBundle) throw new Error('the webhook has no caBundle yet');
      await cluster.kubectlAsync(['get', '--raw', INJECTOR_READYZ]);
      log('the webhook answers');
      return;
    } catch (error) {
      last = (error as Error).message;
    }
    await new Promise((r) => setTimeout(r, 1_000));
  }
  throw new Error(`Outrigger did not become ready in ${timeoutSeconds}s: ${last}`);
}

interface DeploymentList {
  readonly items: readonly { metadata: { name: string }; spec: { replicas: number }; status: { updatedReplicas?: number; availableReplicas?: number } }[];
}
