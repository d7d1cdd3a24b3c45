import { readFileSync } from 'node:fs';
import { shippedPolicies } from '@outrigger/install';
import type { KubeClient, KubeRequest, KubeResponse } from '@outrigger/kube';
import { describe, expect, it } from 'vitest';
import { manifestObjects, REPLACEABLE_KINDS, restoreObjects } from './restore-objects.js';

/** An overlay's Deployment: its overlay labels it, as every object, with the installation's name. */
const overlayDeployment = (name: string, instance = 'outrigger-prod') => ({ metadata: { name, labels: { 'app.kubernetes.io/part-of': 'outrigger', 'app.kubernetes.io/instance': instance } } });
/** A Deployment `helm install platform` created: Helm labels and annotates every object of its release. */
const helmDeployment = (name: string) => ({
  metadata: {
    name,
    labels: { 'app.kubernetes.io/part-of': 'outrigger', 'app.kubernetes.io/instance': 'platform', 'app.kubernetes.io/managed-by': 'Helm' },
    annotations: { 'meta.helm.sh/release-name': 'platform', 'meta.helm.sh/release-namespace': 'default' },
  },
});
const OVERLAY_INSTALL = [overlayDeployment('outrigger-injector'), overlayDeployment('outrigger-rbac-syncer')];

/**
 * Discovery for the kinds below, the install's Deployments (those labelled part of Outrigger), and
 * POST answering AlreadyExists for what `existing` holds.
 */
function apiServer(existing: readonly string[], deployments: readonly object[] = OVERLAY_INSTALL): KubeClient & { readonly created: { path: string; body: unknown; query: unknown }[] } {
  const created: { path: string; body: unknown; query: unknown }[] = [];
  const discovery: Record<string, unknown> = {
    '/api/v1': { resources: [{ name: 'serviceaccounts', kind: 'ServiceAccount', namespaced: true }] },
    '/apis/rbac.authorization.k8s.io/v1': {
      resources: [
        { name: 'rolebindings', kind: 'RoleBinding', namespaced: true },
        { name: 'clusterrolebindings', kind: 'ClusterRoleBinding', namespaced: false },
      ],
    },
  };
  const respond = (status: number, body: unknown): KubeResponse => ({ status, headers: {}, body: { text: async () => JSON.stringify(body), stream: () => new ReadableStream() } });
  return {
    server: 'https://test',
    created,
    async request(request: KubeRequest) {
      if ((request.method ?? 'GET') === 'GET') {
        if (!request.path.endsWith('/deployments')) return respond(200, discovery[request.path]);
        expect(request.query).toEqual({ labelSelector: 'app.kubernetes.io/part-of=outrigger' });
        return respond(200, { items: deployments });
      }
      const body = request.body as { metadata: { name: string } };
      if (existing.includes(`${request.path}/${body.metadata.name}`)) return respond(409, { kind: 'Status', code: 409, reason: 'AlreadyExists', message: 'already exists' });
      created.push({ path: request.path, body, query: request.query });
      return respond(201, body);
    },
  };
}

const MANIFESTS = `apiVersion: v1
kind: ServiceAccount
metadata:
  name: outrigger-injector
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: outrigger-injector
  labels: { app.kubernetes.io/part-of: outrigger }
roleRef: { apiGroup: rbac.authorization.k8s.io, kind: Role, name: outrigger-injector }
subjects: [{ kind: ServiceAccount, name: outrigger-injector }]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: outrigger-injector
roleRef: { apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: outrigger-injector }
subjects: [{ kind: ServiceAccount, name: outrigger-injector, namespace: outrigger-system }, { kind: User, name: alice }]
`;

describe('restoreObjects', () => {
  it('creates only what is missing, as the files have it, and leaves what exists alone', async () => {
    const api = apiServer(['/api/v1/namespaces/outrigger-system/serviceaccounts/outrigger-injector']);
    const outcomes = await restoreObjects(api, manifestObjects(MANIFESTS, 'rbac.yaml'), 'outrigger-system');
    expect(outcomes).toEqual([
      { object: 'ServiceAccount outrigger-system/outrigger-injector', result: 'exists' },
      { object: 'RoleBinding outrigger-system/outrigger-injector', result: 'created' },
      { object: 'ClusterRoleBinding outrigger-injector', result: 'created' },
    ]);
    expect(api.created.map((c) => c.path)).toEqual(['/apis/rbac.authorization.k8s.io/v1/namespaces/outrigger-system/rolebindings', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings']);
    expect(api.created[0]?.body).toMatchObject({ metadata: { name: 'outrigger-injector', namespace: 'outrigger-system', labels: { 'app.kubernetes.io/part-of': 'outrigger' } } });
    expect(api.created[0]?.query).toEqual({ fieldManager: 'outrigger-restore' });
  });

  it("labels what it creates with the install's instance, read from its Deployments, as its overlay labels every object", async () => {
    const api = apiServer([]);
    await restoreObjects(api, manifestObjects(MANIFESTS, 'rbac.yaml'), 'outrigger-system');
    expect(api.created.map((c) => (c.body as { metadata: { labels?: object } }).metadata.labels)).toEqual([
      { 'app.kubernetes.io/instance': 'outrigger-prod' },
      { 'app.kubernetes.io/part-of': 'outrigger', 'app.kubernetes.io/instance': 'outrigger-prod' },
      { 'app.kubernetes.io/instance': 'outrigger-prod' },
    ]);
  });

  it('adds no instance label where the install has none (a base applied alone)', async () => {
    const api = apiServer([], [{ metadata: { name: 'outrigger-rbac-syncer', labels: { 'app.kubernetes.io/part-of': 'outrigger' } } }]);
    await restoreObjects(api, manifestObjects(MANIFESTS, 'rbac.yaml'), 'outrigger-system');
    expect(api.created[1]?.body).toMatchObject({ metadata: { labels: { 'app.kubernetes.io/part-of': 'outrigger' } } });
    expect((api.created[1]?.body as { metadata: { labels: object } }).metadata.labels).not.toHaveProperty(['app.kubernetes.io/instance']);
  });

  it("creates nothing from another installation's manifests", async () => {
    const api = apiServer([]);
    const local = `apiVersion: v1
kind: ServiceAccount
metadata: { name: outrigger-injector, labels: { app.kubernetes.io/instance: outrigger-prod } }
---
apiVersion: v1
kind: ServiceAccount
metadata: { name: outrigger-rbac-syncer, labels: { app.kubernetes.io/instance: outrigger-local } }
`;
    await expect(restoreObjects(api, manifestObjects(local, 'local.yaml'), 'outrigger-system')).rejects.toThrow(
      'ServiceAccount outrigger-rbac-syncer is labelled app.kubernetes.io/instance=outrigger-local, but the install in outrigger-system has app.kubernetes.io/instance=outrigger-prod',
    );
    expect(api.created).toEqual([]);
  });

  it('refuses a Helm install, naming the helm command that repairs its release, and creates nothing', async () => {
    const api = apiServer([], [helmDeployment('outrigger-injector'), helmDeployment('outrigger-rbac-syncer')]);
    const refused = restoreObjects(api, manifestObjects(MANIFESTS, 'rbac.yaml'), 'outrigger-system');
    await expect(refused).rejects.toThrow(/^Outrigger in outrigger-system is Helm release platform in namespace default: .*helm uninstall would leave them behind.*: helm upgrade platform <your chart> --version <its installed version> --namespace default --reuse-values$/);
    expect(api.created).toEqual([]);
  });

  it('creates nothing where no Deployment, or Deployments that differ, tell which installation this is', async () => {
    await expect(restoreObjects(apiServer([], []), manifestObjects(MANIFESTS, 'rbac.yaml'), 'outrigger-system')).rejects.toThrow('no Outrigger Deployment in namespace outrigger-system tells which installation this is');
    const mixed = apiServer([], [overlayDeployment('outrigger-injector'), helmDeployment('outrigger-rbac-syncer')]);
    await expect(restoreObjects(mixed, manifestObjects(MANIFESTS, 'rbac.yaml'), 'outrigger-system')).rejects.toThrow(
      'belong to different installations: outrigger-injector: app.kubernetes.io/instance=outrigger-prod; outrigger-rbac-syncer: Helm release platform in namespace default',
    );
    expect(mixed.created).toEqual([]);
  });

  it('puts namespaced objects and the install ServiceAccount subjects into another install namespace, as Kustomize would', async () => {
    const api = apiServer([]);
    await restoreObjects(api, manifestObjects(MANIFESTS, 'rbac.yaml'), 'tools');
    expect(api.created.map((c) => c.path)[0]).toBe('/api/v1/namespaces/tools/serviceaccounts');
    expect((api.created[2]?.body as { subjects: unknown[] }).subjects).toEqual([
      { kind: 'ServiceAccount', name: 'outrigger-injector', namespace: 'tools' },
      { kind: 'User', name: 'alice' },
    ]);
  });

  it('keeps an object the file puts in another namespace there, e.g. the Role for Events in default, with its subjects moved', async () => {
    const api = apiServer([]);
    const inDefault = `apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: { name: outrigger-cert-manager-events, namespace: default }
roleRef: { apiGroup: rbac.authorization.k8s.io, kind: Role, name: outrigger-cert-manager-events }
subjects: [{ kind: ServiceAccount, name: outrigger-cert-manager, namespace: outrigger-system }]
`;
    const outcomes = await restoreObjects(api, manifestObjects(inDefault, 'rbac.yaml'), 'tools');
    expect(outcomes).toEqual([{ object: 'RoleBinding default/outrigger-cert-manager-events', result: 'created' }]);
    expect(api.created.map((c) => c.path)).toEqual(['/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings']);
    expect((api.created[0]?.body as { subjects: unknown[] }).subjects).toEqual([{ kind: 'ServiceAccount', name: 'outrigger-cert-manager', namespace: 'tools' }]);
  });

  it('names a document that is not an object, and unwraps Lists', () => {
    expect(() => manifestObjects('kind: Secret\n', 'x.yaml')).toThrow('x.yaml: document 0 is not a Kubernetes object');
    expect(manifestObjects('apiVersion: v1\nkind: List\nitems: [{ apiVersion: v1, kind: ServiceAccount, metadata: { name: a } }]\n', 'list.yaml')).toHaveLength(1);
  });
});

describe('the files `outrigger check` prints `restore --replace` for', () => {
  it.each([...new Set(shippedPolicies().map((p) => p.file))])('%s holds only what --replace may put back', (file) => {
    const objects = manifestObjects(readFileSync(new URL(`../../../../${file}`, import.meta.url), 'utf8'), file);
    expect(objects.length).toBeGreaterThan(0);
    for (const o of objects) expect(REPLACEABLE_KINDS.has(o.kind), `${o.kind} ${o.metadata.name}`).toBe(true);
  });
});
