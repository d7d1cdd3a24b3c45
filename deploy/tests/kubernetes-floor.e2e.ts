import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { INJECTION_LABEL_KEY, INJECTION_LABEL_VALUE } from '@outrigger/admission';
import { REFERENCE_PROFILE_FILE, referenceProfile } from '@outrigger/agent-profiles';
import {
  type ControlPlane,
  createTestNamespace,
  DEPLOY_DIR,
  floorApiServer,
  kubeConfigFrom,
  KUSTOMIZATIONS,
  poll,
  render,
  type RenderedObject,
  resolveToolDir,
  runBuildScript,
  startControlPlane,
  suiteKubectl,
  type SuiteKubectl,
  writeTokenKubeconfig,
} from '@outrigger/control-plane';
import { INSTALL_NAMES, MINIMUM_KUBERNETES } from '@outrigger/install';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments, stringify } from 'yaml';

// The oldest Kubernetes the install supports (MINIMUM_KUBERNETES: outrigger check's floor and the
// chart's kubeVersion) as a real kube-apiserver of that minor, built from tools/kube/floor: every base,
// overlay and chart render passes its server-side dry-run apply (its API versions and schemas, and CEL
// its environment compiles: a policy using a newer CEL function is refused there), and the admission
// policies the install ships (the exec guard, the forged-agent and opt-in-missing policies) refuse and
// warn there as they do on the pinned version.
const CHART = join(DEPLOY_DIR, 'helm', 'outrigger');
const PROFILE = referenceProfile().name;
const enabled = { [INJECTION_LABEL_KEY]: INJECTION_LABEL_VALUE };
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

describe("the install's admission policies on the oldest supported Kubernetes", () => {
  // Every ValidatingAdmissionPolicy and binding deploy/base ships, applied for real (each expression compiled by this API server).
  const POLICY_KINDS = new Set(['ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding']);

  /** Creates `object` in `namespace` (server-side dry run: admission runs, nothing is kept): whether it was refused, and kubectl's warnings. */
  const create = (namespace: string, object: object) => {
    const run = spawnSync(join(cp.binDir, 'kubectl'), ['--kubeconfig', cp.kubeconfigPath, 'create', '--dry-run=server', '-n', namespace, '-o', 'name', '-f', '-'], { input: JSON.stringify(object), encoding: 'utf8' });
    return { refused: run.status !== 0 ? run.stderr : undefined, warnings: run.stderr.split('\n').filter((line) => line.startsWith('Warning: ')) };
  };
  const pod = (containers: readonly { name: string; image: string }[]) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers } });
  const APP = { name: 'app', image: 'registry.example/app:1.0' };
  const deployment = (annotations: Record<string, string>) => ({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'd' },
    spec: { selector: { matchLabels: { app: 'a' } }, template: { metadata: { labels: { app: 'a' }, annotations }, spec: { containers: [APP] } } },
  });

  beforeAll(() => {
    const bases = KUSTOMIZATIONS.filter((path) => path.startsWith('base/'));
    const policies = bases.flatMap((path) => render(join(cp.binDir, 'kubectl'), path)).filter((o) => POLICY_KINDS.has(o.kind));
    expect(policies.map((o) => o.metadata.name)).toEqual(expect.arrayContaining([INSTALL_NAMES.execGuard, INSTALL_NAMES.forgedAgentPolicy, INSTALL_NAMES.optInMissingPolicy]));
    k.kubectl(['apply', '--server-side', '-f', REFERENCE_PROFILE_FILE]);
    k.kubectl(['apply', '--server-side', '-f', '-'], toYaml(policies));
  });

  it('the forged-agent policy refuses a pod that does not opt in but carries a container named as the agent', async () => {
    const namespace = await createTestNamespace(kubeConfigFrom(cp.kubeconfigPath), 'floor-forged', enabled);
    const agentNamed = pod([APP, { name: referenceProfile().container.name, image: 'registry.example/agent:1' }]);
    // The API server loads a new policy and its parameters asynchronously.
    const refused = await poll('the forged-agent policy to refuse an agent-named container', () => create(namespace, agentNamed).refused, 60_000);
    expect(refused).toContain(`ValidatingAdmissionPolicy '${INSTALL_NAMES.forgedAgentPolicy}'`);
    expect(create(namespace, pod([APP])).refused).toBeUndefined();
  });

  it('the exec guard lets an agent bound through the syncer exec only into the pod its token was issued to, in its own namespace', async () => {
    const kc = kubeConfigFrom(cp.kubeconfigPath);
    const [own, other] = [await createTestNamespace(kc, 'floor-agent'), await createTestNamespace(kc, 'floor-victim')];
    k.kubectl(['create', 'serviceaccount', 'agent', '-n', own]);
    for (const [namespace, name] of [[own, 'self'], [own, 'neighbour'], [other, 'victim']] as const) {
      k.kubectl(['create', '-n', namespace, '-f', '-'], JSON.stringify({ ...pod([APP]), metadata: { name }, spec: { containers: [APP], serviceAccountName: namespace === own ? 'agent' : 'default' } }));
    }
    // What the rbac-syncer writes: a role that may exec anywhere, bound by a ClusterRoleBinding the guard takes as its parameter.
    const name = `floor-agent-${own}`;
    k.kubectl(['create', 'clusterrole', name, '--verb=create,get', '--resource=pods/exec,pods']);
    k.kubectl(['create', '-f', '-'], JSON.stringify({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name, labels: { 'app.kubernetes.io/managed-by': 'outrigger-rbac-syncer' } },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
      subjects: [{ kind: 'ServiceAccount', namespace: own, name: 'agent' }],
    }));
    const kubeconfig = await writeTokenKubeconfig(kc, join(cp.dir, `${name}.kubeconfig`), own, 'agent', 'self');
    const exec = (namespace: string, target: string) => {
      const run = spawnSync(join(cp.binDir, 'kubectl'), ['--kubeconfig', kubeconfig, 'exec', '-n', namespace, target, '--', 'true'], { encoding: 'utf8' });
      return run.stderr;
    };
    // Past authorization and admission, a request on this node-less control plane ends at the pod's missing node.
    await poll('the exec guard to take the binding as its parameter', () => (/outrigger exec guard/.test(exec(other, 'victim')) ? true : undefined), 60_000);
    expect(exec(other, 'victim')).toMatch(/outrigger exec guard: .* which reaches only pods of its own namespace/);
    expect(exec(own, 'neighbour')).toMatch(/outrigger exec guard: .* which reaches only the pod its token was issued to/);
    expect(exec(own, 'self')).toMatch(/does not have a host assigned/);
  });

  it('the opt-in-missing policy warns, and only warns, of a misspelt opt-in on a Deployment', async () => {
    const namespace = await createTestNamespace(kubeConfigFrom(cp.kubeconfigPath), 'floor-opt-in', enabled);
    const warned = await poll('the opt-in-missing policy to warn', () => create(namespace, deployment({ 'xxl-agent/enabled': 'true' })).warnings[0], 60_000);
    expect(warned).toContain(`outrigger: profile ${PROFILE}: the pod template carries xxl-agent/enabled, under the profile's prefix, but does not opt in to it`);
    expect(create(namespace, deployment({ 'xxl-agent/enabled': 'true' })).refused).toBeUndefined();
    expect(create(namespace, deployment({ 'xxl-agent/enable': 'true' })).warnings).toEqual([]);
  });
});
