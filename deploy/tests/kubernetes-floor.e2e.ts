import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type ControlPlane,
  DEPLOY_DIR,
  floorApiServer,
  KUSTOMIZATIONS,
  type RenderedObject,
  resolveToolDir,
  runBuildScript,
  startControlPlane,
  suiteKubectl,
  type SuiteKubectl,
} from '@outrigger/control-plane';
import { INSTALL_NAMES, MINIMUM_KUBERNETES } from '@outrigger/install';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments, stringify } from 'yaml';

// The oldest Kubernetes the install supports (MINIMUM_KUBERNETES: outrigger check's floor and the
// chart's kubeVersion) as a real kube-apiserver of that minor, built from tools/kube/floor: every base,
// overlay and chart render passes its server-side dry-run apply (its API versions and schemas, and CEL
// its environment compiles: a policy using a newer CEL function is refused there). What the policies
// do there, the services' e2e-floor suites try.
const CHART = join(DEPLOY_DIR, 'helm', 'outrigger');
let cp: ControlPlane;
let k: SuiteKubectl;
let helmBin: string;
let helmHome: string;

beforeAll(async () => {
  cp = await startControlPlane({ kubeApiServer: await floorApiServer() });
  k = suiteKubectl(cp.kubeconfigPath, cp.binDir);
  helmBin = join(await resolveToolDir('OUTRIGGER_HELM_BIN', 'tools/helm/helm/build.sh', ['helm']), 'helm');
  helmHome = mkdtempSync(join(tmpdir(), 'outrigger-floor-helm-'));
  // As in manifests.e2e.ts: the namespace and CRDs exist before anything is applied into or of them.
  k.kubectl(['apply', '--server-side', '-k', join(DEPLOY_DIR, 'base/namespace')]);
  k.kubectl(['apply', '--server-side', '-k', join(DEPLOY_DIR, 'base/crd')]);
  k.kubectl(['apply', '--server-side', '-f', await runBuildScript('deploy/tests/jetstack/build.sh', ['crds'])]);
  await k.established(['agentprofiles.outrigger.dev', 'certificates.cert-manager.io', 'issuers.cert-manager.io']);
  // The cold build of the floor's kube-apiserver takes minutes (tools/prebuild.sh starts it early).
}, 900_000);

afterAll(async () => {
  await cp?.stop();
  if (helmHome) rmSync(helmHome, { recursive: true, force: true });
});

/** `helm template` of the chart as Helm renders it for this API server's version. */
function helmTemplate(set: readonly string[]): string {
  const env = { ...process.env, HELM_CACHE_HOME: join(helmHome, 'cache'), HELM_CONFIG_HOME: join(helmHome, 'config'), HELM_DATA_HOME: join(helmHome, 'data') };
  const args = ['template', 'outrigger', CHART, '--namespace', INSTALL_NAMES.namespace, '--kube-version', cp.version, ...set.flatMap((s) => ['--set', s])];
  const run = spawnSync(helmBin, args, { encoding: 'utf8', env });
  if (run.status !== 0) throw new Error(`helm ${args.join(' ')}: ${run.stderr || run.error?.message}`);
  return run.stdout;
}

const toYaml = (objects: readonly RenderedObject[]) => objects.map((o) => stringify(o)).join('---\n');
const dryRun = (args: readonly string[], input?: string) => k.kubectl(['apply', '--server-side', '--dry-run=server', '--field-manager=outrigger-floor-test', ...args], input);

describe('the oldest supported Kubernetes', () => {
  it("is the floor's kube-apiserver: the minor MINIMUM_KUBERNETES names", () => {
    expect(cp.version).toMatch(new RegExp(`^v${MINIMUM_KUBERNETES.major}\\.${MINIMUM_KUBERNETES.minor}\\.\\d+$`));
  });

  it.each(KUSTOMIZATIONS)('takes kubectl apply --server-side --dry-run=server -k deploy/%s', (path) => {
    expect(dryRun(['-k', join(DEPLOY_DIR, path)])).toMatch(/serverside-applied|configured|created|unchanged/);
  });

  it.each([
    ['its default values', []],
    ['mutual TLS and Jetstack cert-manager', ['mutualTLS.enabled=true', 'jetstack.enabled=true']],
  ] as const)('takes the Helm chart rendered with %s, hooks and tests included', (_, set) => {
    const rendered = parseAllDocuments(helmTemplate(set)).map((doc) => doc.toJS() as RenderedObject).filter((o) => o !== null);
    expect(rendered.map((o) => o.kind)).toEqual(expect.arrayContaining(['ValidatingAdmissionPolicy', 'MutatingWebhookConfiguration', 'Pod', 'Job']));
    // A pod is admitted only with its ServiceAccount in place: Helm creates the release's (and its hooks') before their pods.
    k.kubectl(['apply', '--server-side', '-f', '-'], toYaml(rendered.filter((o) => o.kind === 'ServiceAccount')));
    expect(dryRun(['-f', '-'], toYaml(rendered))).toMatch(/serverside-applied/);
  });
});
