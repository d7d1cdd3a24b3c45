import { join } from 'node:path';
import { AuthorizationV1Api, KubeConfig } from '@kubernetes/client-node';
import { referenceProfile } from '@outrigger/agent-profiles';
import { CLUSTER_SCOPED_KINDS, runBuildScript, DEPLOY_DIR, INSTALL_NAMESPACE, KUSTOMIZATIONS, render, suiteKubectl } from '@outrigger/control-plane';
import { certManagerPermissions, EXEC_GUARD_KINDS, execGuardName, injectorPermissions, INSTALL_NAMES, rbacSyncerPermissions } from '@outrigger/install';
import type { RequiredPermission } from '@outrigger/kube';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { stringify } from 'yaml';

/**
 * The manifests against a real kube-apiserver (RBAC authorizer): every base and overlay passes a
 * server-side dry-run apply, and the RBAC the bases ship gives each ServiceAccount what its
 * service needs and nothing dangerous.
 */
const { kubeconfigPath, binDir } = inject('controlPlane');
const kubectlBin = join(binDir, 'kubectl');
const { kubectl, established } = suiteKubectl(kubeconfigPath, binDir);

const RBAC_KINDS = new Set(['ServiceAccount', 'Role', 'RoleBinding', 'ClusterRole', 'ClusterRoleBinding']);

beforeAll(async () => {
  // A single base is applied into an existing namespace (the overlays create it themselves), and
  // AgentProfiles need their CRD established first, as the README's install steps say.
  kubectl(['apply', '--server-side', '-k', join(DEPLOY_DIR, 'base/namespace')]);
  kubectl(['apply', '--server-side', '-k', join(DEPLOY_DIR, 'base/crd')]);
  await established(['agentprofiles.outrigger.dev']);
  // overlays/prod-jetstack holds Issuers and Certificates: Jetstack cert-manager's CRDs, from its Go module.
  kubectl(['apply', '--server-side', '-f', await runBuildScript('deploy/tests/jetstack/build.sh', ['crds'])]);
  await established(['certificates.cert-manager.io', 'issuers.cert-manager.io']);
});

describe('server-side dry-run apply', () => {
  it.each(KUSTOMIZATIONS)('kubectl apply --server-side --dry-run=server -k deploy/%s', (path) => {
    const out = kubectl(['apply', '--server-side', '--dry-run=server', '--field-manager=outrigger-deploy-test', '-k', join(DEPLOY_DIR, path)]);
    expect(out).toMatch(/serverside-applied|configured|created|unchanged/);
  });
});

describe("objects' scope, as the API server serves their kinds", () => {
  const served = new Map<string, { resources: { kind: string; name: string; namespaced: boolean }[] }>();
  const namespaced = (apiVersion: string, kind: string): boolean => {
    if (!served.has(apiVersion)) served.set(apiVersion, JSON.parse(kubectl(['get', '--raw', apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`])));
    const resource = served.get(apiVersion)?.resources.find((r) => r.kind === kind && !r.name.includes('/'));
    if (!resource) throw new Error(`the API server serves no ${kind} in ${apiVersion}`);
    return resource.namespaced;
  };
  const scope = (isNamespaced: boolean) => (isNamespaced ? 'namespaced' : 'cluster-scoped');

  it.each(KUSTOMIZATIONS)('deploy/%s: a namespace on exactly the objects of a namespaced kind', (path) => {
    const objects = render(kubectlBin, path);
    const placed = objects.map((o) => `${o.kind}/${o.metadata.name} ${scope(o.metadata.namespace !== undefined)}`);
    expect(placed).toEqual(objects.map((o) => `${o.kind}/${o.metadata.name} ${scope(namespaced(o.apiVersion, o.kind))}`));
  });

  it('CLUSTER_SCOPED_KINDS, by which the unit tests place objects without an API server, are the cluster-scoped kinds the bases and overlays ship', () => {
    const kinds = new Map(KUSTOMIZATIONS.flatMap((path) => render(kubectlBin, path)).map((o) => [o.kind, o.apiVersion]));
    const clusterScoped = [...kinds].filter(([kind, apiVersion]) => !namespaced(apiVersion, kind)).map(([kind]) => kind);
    expect(clusterScoped.sort()).toEqual([...CLUSTER_SCOPED_KINDS].sort());
  });
});

interface Access {
  readonly verb: string;
  readonly group?: string;
  readonly resource: string;
  readonly namespace?: string;
  readonly name?: string;
}

const RBAC = 'rbac.authorization.k8s.io';
const ns = INSTALL_NAMESPACE;

/** A permission as the services declare it, in this matrix's terms. */
const access = (p: RequiredPermission): Access => ({
  verb: p.verb,
  ...(p.group ? { group: p.group } : {}),
  resource: p.subresource ? `${p.resource}/${p.subresource}` : p.resource,
  ...(p.namespace ? { namespace: p.namespace } : {}),
  ...(p.name ? { name: p.name } : {}),
});

/** What each service does against the API server, as the services themselves declare it (libs/install), with deploy/base's settings. */
const NEEDED: Record<string, readonly Access[]> = {
  [INSTALL_NAMES.injector]: injectorPermissions({ servingSecret: { namespace: ns, name: INSTALL_NAMES.servingSecret }, profilesFromApi: true }).map(access),
  [INSTALL_NAMES.rbacSyncer]: rbacSyncerPermissions([referenceProfile()], { namespace: ns, name: INSTALL_NAMES.rbacSyncer }, INSTALL_NAMES.execGuard, true).map(access),
  [INSTALL_NAMES.certManager]: certManagerPermissions({
    namespace: ns,
    secrets: [INSTALL_NAMES.caSecret, INSTALL_NAMES.servingSecret],
    webhooks: [INSTALL_NAMES.webhook],
    lease: { namespace: ns, name: INSTALL_NAMES.certManager },
  }).map(access),
};

const DELETE_CLUSTER_ROLE_BINDINGS: Access = { verb: 'delete', group: RBAC, resource: 'clusterrolebindings' };

/**
 * Denied to every Outrigger ServiceAccount by RBAC, but these: the rbac-syncer deletes its
 * per-namespace bindings, whose names RBAC cannot list; the confinement policy limits it to its own
 * (apps/rbac-syncer/e2e/least-privilege.e2e.ts tries another's).
 */
const ALLOWED_BY_RBAC_ONLY: Readonly<Record<string, readonly Access[]>> = { 'outrigger-rbac-syncer': [DELETE_CLUSTER_ROLE_BINDINGS] };

/** Denied to every Outrigger ServiceAccount. */
const FORBIDDEN: readonly Access[] = [
  { verb: 'list', resource: 'secrets' },
  { verb: 'get', resource: 'secrets' },
  { verb: 'watch', resource: 'secrets' },
  { verb: 'list', resource: 'secrets', namespace: 'kube-system' },
  { verb: 'get', resource: 'secrets', namespace: 'kube-system', name: 'outrigger-injector-tls' },
  { verb: 'list', resource: 'secrets', namespace: 'default' },
  { verb: 'escalate', group: RBAC, resource: 'clusterroles' },
  { verb: 'escalate', group: RBAC, resource: 'clusterroles', name: 'cluster-admin' },
  { verb: 'bind', group: RBAC, resource: 'clusterroles', name: 'cluster-admin' },
  { verb: 'escalate', group: RBAC, resource: 'roles', namespace: ns },
  { verb: 'patch', group: RBAC, resource: 'clusterroles', name: 'cluster-admin' },
  DELETE_CLUSTER_ROLE_BINDINGS,
  { verb: 'impersonate', resource: 'serviceaccounts' },
  { verb: 'create', resource: 'serviceaccounts/token', namespace: ns },
  { verb: 'create', resource: 'pods', namespace: ns },
  { verb: 'create', resource: 'pods/exec', namespace: 'default' },
  { verb: 'delete', resource: 'namespaces' },
  { verb: 'create', group: 'admissionregistration.k8s.io', resource: 'mutatingwebhookconfigurations' },
  { verb: 'delete', group: 'admissionregistration.k8s.io', resource: 'mutatingwebhookconfigurations', name: 'outrigger-injector' },
  // Nobody but an admin may weaken or remove the exec guards, nor read other policies.
  ...EXEC_GUARD_KINDS.flatMap((kind) =>
    ['update', 'patch', 'delete'].flatMap((verb) =>
      ['validatingadmissionpolicies', 'validatingadmissionpolicybindings'].map((resource) => ({ verb, group: 'admissionregistration.k8s.io', resource, name: execGuardName(kind) })),
    ),
  ),
  { verb: 'create', group: 'admissionregistration.k8s.io', resource: 'validatingadmissionpolicybindings' },
  { verb: 'list', group: 'admissionregistration.k8s.io', resource: 'validatingadmissionpolicies' },
  // Wildcards: a `*` verb, resource or group in any rule would allow these.
  { verb: '*', group: '*', resource: '*' },
  { verb: '*', resource: 'pods', namespace: ns },
  { verb: 'get', group: '*', resource: '*' },
  { verb: 'deletecollection', resource: 'pods' },
  // Reading a workload's owner is not restarting it: only `outrigger rollout restart`, run by a person, does that.
  ...['update', 'patch'].flatMap((verb) => ['deployments', 'statefulsets', 'daemonsets', 'replicasets'].map((resource) => ({ verb, group: 'apps', resource, namespace: ns }))),
  { verb: 'list', group: 'apps', resource: 'replicasets' },
  { verb: 'watch', group: 'batch', resource: 'jobs' },
];

/** Beyond reading its serving Secret, the injector may do nothing: not even read the CA or its ConfigMap. */
const INJECTOR_DENIED: readonly Access[] = [
  { verb: 'get', resource: 'secrets', namespace: ns, name: 'outrigger-webhook-ca' },
  { verb: 'list', resource: 'secrets', namespace: ns },
  { verb: 'update', resource: 'secrets', namespace: ns, name: 'outrigger-injector-tls' },
  { verb: 'delete', resource: 'secrets', namespace: ns, name: 'outrigger-injector-tls' },
  { verb: 'get', resource: 'configmaps', namespace: ns, name: 'outrigger-injector-profiles' },
  { verb: 'list', resource: 'pods' },
  { verb: 'watch', resource: 'namespaces' },
  { verb: 'create', resource: 'events', namespace: ns },
  { verb: 'get', group: 'coordination.k8s.io', resource: 'leases', namespace: ns, name: 'outrigger-injector' },
  { verb: 'list', group: RBAC, resource: 'clusterroles' },
];

const describeAccess = (a: Access) => `${a.verb} ${a.group ? `${a.group}/` : ''}${a.resource}${a.name ? `/${a.name}` : ''} in ${a.namespace ?? '(cluster)'}`;

describe('SubjectAccessReview matrix of the shipped RBAC', () => {
  let authz: AuthorizationV1Api;

  beforeAll(() => {
    // Apply each base's ServiceAccount and RBAC for real (the workloads are not needed).
    for (const path of ['base/injector', 'base/rbac-syncer', 'base/cert-manager']) {
      const rbac = render(kubectlBin, path).filter((o) => RBAC_KINDS.has(o.kind));
      kubectl(['apply', '--server-side', '--field-manager=outrigger-deploy-test', '-f', '-'], rbac.map((o) => stringify(o)).join('---\n'));
    }
    const kc = new KubeConfig();
    kc.loadFromFile(kubeconfigPath);
    authz = kc.makeApiClient(AuthorizationV1Api);
  });

  async function allowed(serviceAccount: string, access: Access): Promise<boolean> {
    const [resource, subresource] = access.resource.split('/');
    const review = await authz.createSubjectAccessReview({
      body: {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SubjectAccessReview',
        spec: {
          user: `system:serviceaccount:${ns}:${serviceAccount}`,
          groups: ['system:serviceaccounts', `system:serviceaccounts:${ns}`, 'system:authenticated'],
          resourceAttributes: {
            verb: access.verb,
            group: access.group ?? '',
            resource,
            ...(subresource ? { subresource } : {}),
            ...(access.namespace ? { namespace: access.namespace } : {}),
            ...(access.name ? { name: access.name } : {}),
          },
        },
      },
    });
    return review.status?.allowed === true;
  }

  async function check(serviceAccount: string, list: readonly Access[]): Promise<Record<string, boolean>> {
    const answers = await Promise.all(list.map(async (access) => [describeAccess(access), await allowed(serviceAccount, access)] as const));
    return Object.fromEntries(answers);
  }

  const allTrue = (list: readonly Access[]) => Object.fromEntries(list.map((a) => [describeAccess(a), true]));
  const allFalse = (list: readonly Access[]) => Object.fromEntries(list.map((a) => [describeAccess(a), false]));

  it('the ServiceAccounts exist', () => {
    const names = kubectl(['get', 'serviceaccounts', '-n', ns, '-o', 'jsonpath={.items[*].metadata.name}']).split(' ');
    expect(names).toEqual(expect.arrayContaining(Object.keys(NEEDED)));
  });

  it.each(Object.keys(NEEDED))('%s is allowed every verb it needs', async (serviceAccount) => {
    const needed = NEEDED[serviceAccount] ?? [];
    expect(needed.length).toBeGreaterThan(0);
    expect(await check(serviceAccount, needed)).toEqual(allTrue(needed));
  });

  it.each(Object.keys(NEEDED))('%s is denied cluster-wide secrets, escalate, wildcards and other dangerous verbs', async (serviceAccount) => {
    const forbidden = FORBIDDEN.filter((a) => !(ALLOWED_BY_RBAC_ONLY[serviceAccount] ?? []).includes(a));
    expect(await check(serviceAccount, forbidden)).toEqual(allFalse(forbidden));
  });

  it('the injector can do nothing but read its serving Secret, none of what the other services need', async () => {
    const own = new Set((NEEDED['outrigger-injector'] ?? []).map(describeAccess));
    const everything = [...INJECTOR_DENIED, ...Object.values(NEEDED).flat()].filter((a) => !own.has(describeAccess(a)));
    expect(await check('outrigger-injector', everything)).toEqual(allFalse(everything));
  });

  it('the cert-manager may record Events in its namespace and in default, nowhere else', async () => {
    const elsewhere = ['kube-system', 'kube-public', 'team-a'].map((namespace): Access => ({ verb: 'create', resource: 'events', namespace }));
    expect(await check(INSTALL_NAMES.certManager, elsewhere)).toEqual(allFalse(elsewhere));
  });

  it('the review itself discriminates: a ServiceAccount bound to cluster-admin would fail the matrix', async () => {
    kubectl(['create', 'clusterrolebinding', 'outrigger-deploy-test-admin', '--clusterrole=cluster-admin', `--serviceaccount=${ns}:outrigger-deploy-test-admin`]);
    try {
      const answers = await check('outrigger-deploy-test-admin', FORBIDDEN);
      expect(Object.values(answers).every(Boolean)).toBe(true);
    } finally {
      kubectl(['delete', 'clusterrolebinding', 'outrigger-deploy-test-admin']);
    }
  });
});
