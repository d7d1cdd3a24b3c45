import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { intendedNamespace, repoRoot, resolveBinaries, resolveToolDir, type RenderedObject } from '@outrigger/control-plane';
import { checkPermissions, INSTALL_NAMES, INSTANCE_LABEL, rbacRules, uninstallHookPermissions } from '@outrigger/install';
import { parseAllDocuments } from 'yaml';
import { beforeAll, describe, expect, it } from 'vitest';
import { CHART_DIR, chartFiles, key, pinDigests, renderVariant, TOGGLES, variants } from './chart.ts';
import { checkHookObjects, IMAGE_CLI_MAIN, TEST_HOOK_ANNOTATIONS } from './check-hook.ts';
import { HOOK_ANNOTATIONS, uninstallHookObjects } from './uninstall-hook.ts';

let kubectl: string;
let helm: string;
const renders = new Map<string, RenderedObject[]>();

beforeAll(async () => {
  kubectl = join(await resolveBinaries(), 'kubectl');
  helm = join(await resolveToolDir('OUTRIGGER_HELM_BIN', 'tools/helm/helm/build.sh', ['helm']), 'helm');
  for (const v of variants()) renders.set(v.id, renderVariant(kubectl, v.enabled));
}, 900_000);

function runHelm(args: string[]) {
  return spawnSync(helm, args, { encoding: 'utf8', env: { ...process.env, HELM_CACHE_HOME: '/tmp/outrigger-helm/cache', HELM_CONFIG_HOME: '/tmp/outrigger-helm/config', HELM_DATA_HOME: '/tmp/outrigger-helm/data' } });
}

/** `helm template` of the chart with the given --set flags, as objects by kind/namespace/name. */
function rendered(set: string[] = [], release = 'outrigger', namespace = 'default'): RenderedObject[] {
  const result = runHelm(['template', release, CHART_DIR, '--namespace', namespace, '--include-crds', ...set.flatMap((s) => ['--set', s])]);
  if (result.status !== 0) throw new Error(`helm template failed: ${result.stderr}`);
  return parseAllDocuments(result.stdout).map((d) => d.toJS() as RenderedObject).filter(Boolean);
}

const isHook = (o: RenderedObject) => o.metadata.annotations?.['helm.sh/hook'] !== undefined;
/** The rules of the Role or ClusterRole among a hook's objects. */
const rulesOf = (hooks: readonly RenderedObject[], kind: string) => (hooks.find((o) => o.kind === kind) as unknown as { rules: { resources?: string[] }[] }).rules;

/** The release's objects without its hooks (Kustomize has no hooks: they are compared on their own). */
function template(set: string[] = [], release = 'outrigger'): Map<string, RenderedObject> {
  return new Map(rendered(set, release).filter((o) => !isHook(o)).map((o) => [key(o), o]));
}

const byKey = (objects: readonly RenderedObject[]) => new Map(objects.map((o) => [key(o), o]));

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile())
    .map((e) => relative(dir, join(e.parentPath, e.name)))
    .sort();
}

describe('the Helm chart deploy/helm/outrigger', () => {
  it('is what tools/helm/generate-chart.ts makes of the overlays now (npm run generate:helm)', () => {
    const expected = chartFiles(renders);
    expect(filesUnder(CHART_DIR)).toEqual([...expected.keys()].sort());
    for (const [path, content] of expected) expect(readFileSync(join(CHART_DIR, path), 'utf8'), path).toBe(content);
  });

  it('passes helm lint (strict)', () => {
    const result = runHelm(['lint', '--strict', CHART_DIR]);
    expect(result.stdout + result.stderr, result.stdout + result.stderr).toMatch(/1 chart\(s\) linted, 0 chart\(s\) failed/);
    expect(result.status).toBe(0);
  });

  it('renders by default exactly the prod overlay, object for object, its CRD included', () => {
    const prod = renders.get('000') as RenderedObject[];
    expect(prod.some((o) => o.kind === 'CustomResourceDefinition')).toBe(true);
    expect(template()).toEqual(byKey(prod));
  });

  it.each([
    ['by default', []],
    ['with every component on', TOGGLES.map((t) => `${t.value}.enabled=true`)],
  ])('%s, puts no cluster-scoped object in a namespace and every namespaced one, hooks too, in its own', (_when, set) => {
    const objects = rendered(set, 'outrigger', 'platform');
    const placed = (namespace: (o: RenderedObject) => string | undefined) => objects.map((o) => `${o.kind}/${o.metadata.name} in ${namespace(o) ?? '(cluster)'}`);
    // The test's Pod and its ServiceAccount run in the release's namespace, where `helm test --logs` reads test Pods.
    const runsInRelease = (o: RenderedObject) => o.metadata.name === INSTALL_NAMES.checkHook && (o.kind === 'Pod' || o.kind === 'ServiceAccount');
    expect(placed((o) => o.metadata.namespace)).toEqual(placed((o) => (runsInRelease(o) ? 'platform' : intendedNamespace(o))));
  });

  it("labels every object with the release's name as app.kubernetes.io/instance, as the prod overlay labels with its installation's", () => {
    const prod = renders.get('000') as RenderedObject[];
    expect(new Set(prod.map((o) => o.metadata.labels?.[INSTANCE_LABEL]))).toEqual(new Set(['outrigger']));
    const objects = [...template(TOGGLES.map((t) => `${t.value}.enabled=true`), 'platform-outrigger').values()];
    const instances = (kind: (k: string) => boolean) => new Set(objects.filter((o) => kind(o.kind)).map((o) => o.metadata.labels?.[INSTANCE_LABEL]));
    expect(instances((k) => k !== 'CustomResourceDefinition')).toEqual(new Set(['platform-outrigger']));
    // Helm never templates crds/: the CRD, shared by every release, keeps the overlay's name.
    expect(instances((k) => k === 'CustomResourceDefinition')).toEqual(new Set(['outrigger']));
  });

  it.each(variants().filter((v) => v.id !== '000'))('with the components of variant $id on, renders the prod overlay with those components', (variant) => {
    const set = TOGGLES.map((t) => `${t.value}.enabled=${variant.enabled.has(t.value)}`);
    expect(template(set)).toEqual(byKey(renders.get(variant.id) as RenderedObject[]));
  });

  const syncerDeployment = () => renders.get('000')?.find((o) => o.kind === 'Deployment' && o.metadata.name === INSTALL_NAMES.rbacSyncer) as RenderedObject;

  it('has two hooks: the pre-delete one and the test', () => {
    const hooks = rendered([], 'platform').filter(isHook);
    expect(hooks.map(key).sort()).toEqual([...uninstallHookObjects(syncerDeployment()), ...checkHookObjects(syncerDeployment(), 'default')].map(key).sort());
    expect(new Set(hooks.map((o) => o.metadata.annotations?.['helm.sh/hook']))).toEqual(new Set(['pre-delete', 'test']));
  });

  it("pre-delete: the rbac-syncer's image removing what the syncer wrote, with exactly libs/install's uninstallHookPermissions", () => {
    const digest = `sha256:${'b'.repeat(64)}`;
    const hooks = rendered([`images.rbacSyncer.repository=registry.example/rbac-syncer`, `images.rbacSyncer.digest=${digest}`], 'platform').filter((o) => o.metadata.annotations?.['helm.sh/hook'] === 'pre-delete');
    expect(hooks.map(key).sort()).toEqual(uninstallHookObjects(syncerDeployment()).map(key).sort());
    expect(hooks.map((o) => o.kind).sort()).toEqual(['ClusterRole', 'ClusterRoleBinding', 'Job', 'Role', 'RoleBinding', 'ServiceAccount']);
    for (const hook of hooks) {
      expect(hook.metadata.annotations, key(hook)).toMatchObject(HOOK_ANNOTATIONS);
      expect(hook.metadata.labels, key(hook)).toMatchObject({ 'app.kubernetes.io/part-of': 'outrigger', [INSTANCE_LABEL]: 'platform' });
    }
    const job = hooks.find((o) => o.kind === 'Job') as unknown as { spec: { template: { spec: { serviceAccountName: string; containers: { image: string; command: string[] }[] } } } };
    expect(job.spec.template.spec.serviceAccountName).toBe(INSTALL_NAMES.uninstallHook);
    expect(job.spec.template.spec.containers.map((c) => [c.image, c.command])).toEqual([[`registry.example/rbac-syncer@${digest}`, ['node', 'remove-bindings.js']]]);
    // The entry the Job runs is built beside the syncer's main.js.
    expect(existsSync(join(repoRoot(), 'apps', 'rbac-syncer', 'src', 'remove-bindings.ts'))).toBe(true);
    const rules = (kind: string) => rulesOf(hooks, kind);
    const permissions = uninstallHookPermissions(INSTALL_NAMES.namespace);
    expect(rules('Role')).toEqual(rbacRules(permissions.filter((p) => p.namespace === INSTALL_NAMES.namespace)));
    expect(rules('ClusterRole')).toEqual(rbacRules(permissions.filter((p) => p.namespace === undefined)));
    expect(rules('ClusterRole')).toEqual([
      ...['clusterroles', 'clusterrolebindings', 'rolebindings'].map((r) => ({ apiGroups: ['rbac.authorization.k8s.io'], resources: [r], verbs: ['list', 'delete'] })),
      // The mutating webhooks, for how long a request authorized before the roles went may take to reach the exec guard.
      { apiGroups: ['admissionregistration.k8s.io'], resources: ['mutatingwebhookconfigurations'], verbs: ['list'] },
    ]);
  });

  it("test: `outrigger check` in the rbac-syncer's image, as a Pod whose log `helm test --logs` prints, with exactly libs/install's checkPermissions", () => {
    const digest = `sha256:${'c'.repeat(64)}`;
    const hooks = rendered([`images.rbacSyncer.repository=registry.example/rbac-syncer`, `images.rbacSyncer.digest=${digest}`], 'platform').filter((o) => o.metadata.annotations?.['helm.sh/hook'] === 'test');
    expect(hooks.map((o) => o.kind).sort()).toEqual(['ClusterRole', 'ClusterRoleBinding', 'Pod', 'Role', 'RoleBinding', 'ServiceAccount']);
    for (const hook of hooks) {
      expect(hook.metadata.annotations, key(hook)).toMatchObject(TEST_HOOK_ANNOTATIONS);
      expect(hook.metadata.labels, key(hook)).toMatchObject({ 'app.kubernetes.io/part-of': 'outrigger', 'app.kubernetes.io/name': INSTALL_NAMES.checkHook, [INSTANCE_LABEL]: 'platform' });
    }
    // The access first, then the Pod that uses it.
    const weight = (o: RenderedObject) => Number(o.metadata.annotations?.['helm.sh/hook-weight']);
    expect(hooks.filter((o) => o.kind !== 'Pod').every((o) => weight(o) < weight(hooks.find((p) => p.kind === 'Pod') as RenderedObject))).toBe(true);
    const pod = hooks.find((o) => o.kind === 'Pod') as unknown as { spec: { serviceAccountName: string; restartPolicy: string; containers: { image: string; command: string[] }[] } };
    expect(pod.spec.serviceAccountName).toBe(INSTALL_NAMES.checkHook);
    expect(pod.spec.restartPolicy).toBe('Never');
    expect(pod.spec.containers.map((c) => [c.image, c.command])).toEqual([[`registry.example/rbac-syncer@${digest}`, ['node', IMAGE_CLI_MAIN, 'check']]]);
    const rules = (kind: string) => rulesOf(hooks, kind);
    const permissions = checkPermissions(INSTALL_NAMES.namespace);
    expect(rules('Role')).toEqual(rbacRules(permissions.filter((p) => p.namespace === INSTALL_NAMES.namespace)));
    expect(rules('ClusterRole')).toEqual(rbacRules(permissions.filter((p) => p.namespace === undefined)));
    // Reads, and asking what each service may do: no verb that changes anything.
    expect(new Set(permissions.map((p) => (p.resource === 'subjectaccessreviews' ? 'review' : p.verb)))).toEqual(new Set(['get', 'list', 'review']));
    // check judges the certificates the injectors report: no Secret, so no private key, is readable.
    expect([...rules('Role'), ...rules('ClusterRole')].filter((r) => r.resources?.some((res) => res === 'secrets' || res === '*'))).toEqual([]);
  });

  it('takes images by digest, replicas and the failure policy from its values', () => {
    const digest = `sha256:${'a'.repeat(64)}`;
    const objects = template([`images.injector.repository=registry.example/outrigger/injector`, `images.injector.digest=${digest}`, 'replicas.injector=5', 'webhook.failurePolicy=Ignore']);
    const injector = objects.get('Deployment/outrigger-system/outrigger-injector') as unknown as { spec: { replicas: number; template: { spec: { containers: { name: string; image: string }[] } } } };
    expect(injector.spec.replicas).toBe(5);
    expect(injector.spec.template.spec.containers.find((c) => c.name === 'injector')?.image).toBe(`registry.example/outrigger/injector@${digest}`);
    const webhook = objects.get('MutatingWebhookConfiguration//outrigger-injector') as unknown as { webhooks: { failurePolicy: string }[] };
    expect(webhook.webhooks.map((w) => w.failurePolicy)).toEqual(['Ignore']);
  });

  it('leaves out the reference profile and the namespace when told to', () => {
    const objects = [...template(['referenceProfile.enabled=false', 'createNamespace=false']).values()];
    expect(objects.filter((o) => o.kind === 'AgentProfile' || o.kind === 'Namespace')).toEqual([]);
    expect(objects.length).toBe((renders.get('000') as RenderedObject[]).length - 2);
  });

  it.each([
    ['an unknown setting', 'replicas.injecter=2', 'injecter'],
    ['a failure policy that does not exist', 'webhook.failurePolicy=Sometimes', 'failurePolicy'],
    ['a digest that is not one', 'images.injector.digest=latest', 'digest'],
    ['zero replicas', 'replicas.rbacSyncer=0', 'rbacSyncer'],
  ])('refuses %s, naming it', (_what, set, named) => {
    const result = runHelm(['template', 'outrigger', CHART_DIR, '--set', set]);
    expect(result.status).not.toBe(0);
    expect(result.stderr).toContain(named);
  });

  it("pins the images to a release's digests (the release workflow's step), and refuses a digests file missing one", () => {
    const values = readFileSync(join(CHART_DIR, 'values.yaml'), 'utf8');
    const digest = (c: string) => `sha256:${c.repeat(64)}`;
    const env = `injector=ghcr.io/acme/injector@${digest('1')}\nrbac-syncer=ghcr.io/acme/rbac-syncer@${digest('2')}\ncert-manager=ghcr.io/acme/cert-manager@${digest('3')}\nxxl-agent=ghcr.io/acme/xxl-agent@${digest('4')}\n`;
    const pinned = pinDigests(values, env);
    expect(pinned).toContain('# createNamespace');
    const dir = mkdtempSync(join(tmpdir(), 'outrigger-values-'));
    writeFileSync(join(dir, 'values.yaml'), pinned);
    const result = runHelm(['template', 'outrigger', CHART_DIR, '-f', join(dir, 'values.yaml')]);
    rmSync(dir, { recursive: true });
    expect(result.status, result.stderr).toBe(0);
    for (const [app, c] of [['injector', '1'], ['rbac-syncer', '2'], ['cert-manager', '3'], ['xxl-agent', '4']] as const) expect(result.stdout).toContain(`image: ghcr.io/acme/${app}@${digest(c)}`);
    expect(() => pinDigests(values, env.split('\n').slice(1).join('\n'))).toThrow('digests: no digest for injector');
    expect(() => pinDigests(values, 'injector=ghcr.io/acme/injector:1.0\n')).toThrow('"injector=ghcr.io/acme/injector:1.0" is not');
  });
});
