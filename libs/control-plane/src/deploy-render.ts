import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { AppName } from './app-process.js';
import { repoRoot } from './binaries.js';
import { INSTALL_NAMESPACE } from './cluster/outrigger-install.js';
import { parse, parseAllDocuments } from 'yaml';

/** A rendered Kubernetes object, as plain JSON. */
export interface RenderedObject {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: { readonly name: string; readonly namespace?: string; readonly labels?: Record<string, string>; readonly annotations?: Record<string, string> };
  readonly [key: string]: unknown;
}

export const DEPLOY_DIR = join(repoRoot(), 'deploy');

/** Every base and overlay (directories holding a Kustomization), relative to deploy/. */
export const KUSTOMIZATIONS = ['base', 'overlays'].flatMap((group) =>
  readdirSync(join(DEPLOY_DIR, group))
    .filter((name) => statSync(join(DEPLOY_DIR, group, name, 'kustomization.yaml'), { throwIfNoEntry: false })?.isFile())
    .map((name) => `${group}/${name}`),
);

/** Every kustomization.yaml under deploy/ (bases, overlays and components). */
export function kustomizationFiles(dir = DEPLOY_DIR): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return kustomizationFiles(path);
    return entry.name === 'kustomization.yaml' ? [path] : [];
  });
}

/** `kubectl kustomize deploy/<path>` parsed into objects. */
export function render(kubectl: string, path: string): RenderedObject[] {
  const out = execFileSync(kubectl, ['kustomize', join(DEPLOY_DIR, path)], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  return parseAllDocuments(out).map((doc) => {
    if (doc.errors.length > 0) throw doc.errors[0];
    return doc.toJS() as RenderedObject;
  });
}

/**
 * The kinds deploy/ and its Helm chart ship that are cluster-scoped; every other kind they ship is
 * namespaced (deploy/tests/manifests.e2e.ts holds this to a real API server's discovery).
 */
export const CLUSTER_SCOPED_KINDS: ReadonlySet<string> = new Set([
  'Namespace',
  'CustomResourceDefinition',
  'AgentProfile',
  'ClusterRole',
  'ClusterRoleBinding',
  'MutatingWebhookConfiguration',
  'ValidatingAdmissionPolicy',
  'ValidatingAdmissionPolicyBinding',
  'PriorityClass',
]);

/** The namespaced objects deploy/ puts outside the install namespace: the cert-manager's right to record Events about cluster-scoped objects, which go to `default`. */
const OUTSIDE_INSTALL_NAMESPACE: Readonly<Record<string, string>> = {
  'Role/outrigger-cert-manager-events': 'default',
  'RoleBinding/outrigger-cert-manager-events': 'default',
};

/** The namespace deploy/ means an object to be in: none for a cluster-scoped kind. */
export function intendedNamespace(object: RenderedObject): string | undefined {
  if (CLUSTER_SCOPED_KINDS.has(object.kind)) return undefined;
  return OUTSIDE_INSTALL_NAMESPACE[`${object.kind}/${object.metadata.name}`] ?? INSTALL_NAMESPACE;
}

export function readDeployFile(path: string): string {
  return readFileSync(join(DEPLOY_DIR, path), 'utf8');
}

interface DeployedContainer {
  readonly name: string;
  readonly env?: readonly { name: string; value?: string }[];
  readonly resources?: { readonly limits?: { readonly memory?: string } };
}

/** The app's own container in deploy/base. */
function deployedContainer(app: AppName): DeployedContainer {
  const deployment = parse(readDeployFile(`base/${app}/deployment.yaml`)) as { spec: { template: { spec: { containers: readonly DeployedContainer[] } } } };
  const container = deployment.spec.template.spec.containers.find((c) => c.name === app);
  if (!container) throw new Error(`deploy/base/${app}/deployment.yaml has no container named ${app}`);
  return container;
}

/** The NODE_OPTIONS deploy/base gives an app's container ('' if none), so benchmarks run what ships. */
export function deployedNodeOptions(app: AppName): string {
  return deployedContainer(app).env?.find((e) => e.name === 'NODE_OPTIONS')?.value ?? '';
}

const BINARY_SUFFIXES: Record<string, number> = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30 };

/** The memory limit deploy/base gives an app's container, in bytes, so benchmarks run it as it ships. */
export function deployedMemoryLimit(app: AppName): number {
  const limit = deployedContainer(app).resources?.limits?.memory;
  const match = /^(\d+)(Ki|Mi|Gi)$/.exec(limit ?? '');
  if (!match) throw new Error(`deploy/base/${app}/deployment.yaml: resources.limits.memory ${JSON.stringify(limit)} is not a whole number of Ki, Mi or Gi`);
  return Number(match[1]) * (BINARY_SUFFIXES[match[2] as string] as number);
}
