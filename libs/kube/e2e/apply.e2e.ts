import { AdmissionregistrationV1Api, CoreV1Api } from '@kubernetes/client-node';
import { createTestNamespace, kubeConfigFrom } from '@outrigger/control-plane';
import { describe, expect, inject, it } from 'vitest';
import { applyObject, classifyApiError, deleteObject, jsonPatchGuarded, jsonPointer, readObject, type KubeObject, loadKubeClient } from '../src/index.js';

interface ConfigMap extends KubeObject {
  readonly data?: Record<string, string>;
}

const configMap = (namespace: string, data: Record<string, string>, labels?: Record<string, string>): ConfigMap => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'settings', namespace, ...(labels ? { labels } : {}) },
  data,
});

describe('applyObject (server-side apply)', () => {
  const cp = inject('controlPlane');
  const kc = kubeConfigFrom(cp.kubeconfigPath);
  const client = loadKubeClient(cp.kubeconfigPath);
  const core = kc.makeApiClient(CoreV1Api);

  it('creates, then applying the same intent again is a no-op (same resourceVersion)', async () => {
    const namespace = await createTestNamespace(kc, 'apply-idem');
    const first = await applyObject<ConfigMap>(client, configMap(namespace, { a: '1' }, { app: 'x' }), { fieldManager: 'outrigger-test' });
    const second = await applyObject<ConfigMap>(client, configMap(namespace, { a: '1' }, { app: 'x' }), { fieldManager: 'outrigger-test' });
    expect(first.metadata?.resourceVersion).toBeTruthy();
    expect(second.metadata?.resourceVersion).toBe(first.metadata?.resourceVersion);
    expect(second.data).toEqual({ a: '1' });
    const changed = await applyObject<ConfigMap>(client, configMap(namespace, { a: '2' }, { app: 'x' }), { fieldManager: 'outrigger-test' });
    expect(changed.metadata?.resourceVersion).not.toBe(first.metadata?.resourceVersion);
  });

  it('leaves fields of other managers alone and removes only fields it stopped applying', async () => {
    const namespace = await createTestNamespace(kc, 'apply-owners');
    await applyObject(client, configMap(namespace, { ours: '1', dropped: 'x' }), { fieldManager: 'outrigger-test' });
    await applyObject(client, configMap(namespace, { theirs: 'keep' }), { fieldManager: 'someone-else' });
    await core.patchNamespacedConfigMap({ namespace, name: 'settings', body: [{ op: 'add', path: '/data/manual', value: 'edit' }] });
    const result = await applyObject<ConfigMap>(client, configMap(namespace, { ours: '2' }), { fieldManager: 'outrigger-test' });
    expect(result.data).toEqual({ ours: '2', theirs: 'keep', manual: 'edit' });
  });

  it('fails with 409 on a field another manager owns, unless forced', async () => {
    const namespace = await createTestNamespace(kc, 'apply-conflict');
    await applyObject(client, configMap(namespace, { shared: 'theirs' }), { fieldManager: 'someone-else' });
    const error = await applyObject(client, configMap(namespace, { shared: 'ours' }), { fieldManager: 'outrigger-test' }).catch((e: unknown) => e);
    expect(classifyApiError(error)).toMatchObject({ kind: 'conflict', code: 409 });
    expect(classifyApiError(error).message).toContain('conflict');
    const forced = await applyObject<ConfigMap>(client, configMap(namespace, { shared: 'ours' }), { fieldManager: 'outrigger-test', force: true });
    expect(forced.data).toEqual({ shared: 'ours' });
  });

  it('takes a resourceVersion in the applied object, and one given to deleteObject, as preconditions: a changed object is left as it is', async () => {
    const namespace = await createTestNamespace(kc, 'apply-version');
    const seen = await applyObject<ConfigMap>(client, configMap(namespace, { a: '1' }), { fieldManager: 'outrigger-test' });
    const version = seen.metadata?.resourceVersion ?? '';
    const current = await applyObject<ConfigMap>(client, configMap(namespace, { a: '2' }), { fieldManager: 'outrigger-test' });
    const over = (data: Record<string, string>) => ({ ...configMap(namespace, data), metadata: { ...configMap(namespace, data).metadata, resourceVersion: version } });
    const stale = await applyObject(client, over({ a: 'stale' }), { fieldManager: 'outrigger-test', force: true }).catch((e: unknown) => e);
    expect(classifyApiError(stale)).toMatchObject({ kind: 'conflict', code: 409 });
    const ref = { apiVersion: 'v1', kind: 'ConfigMap', name: 'settings', namespace };
    expect(classifyApiError(await deleteObject(client, ref, { resourceVersion: version }).catch((e: unknown) => e))).toMatchObject({ kind: 'conflict', code: 409 });
    expect((await readObject<ConfigMap>(client, ref))?.data).toEqual({ a: '2' });
    expect(await deleteObject(client, ref, { resourceVersion: current.metadata?.resourceVersion })).toBe(true);
    expect(await readObject(client, ref)).toBeUndefined();
  });

  it('applies cluster-scoped objects of other API groups', async () => {
    const name = `outrigger-apply-${Date.now()}`;
    const crb = {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
      subjects: [{ kind: 'ServiceAccount', name: 'agent', namespace: 'default' }],
    };
    const applied = await applyObject(client, crb, { fieldManager: 'outrigger-test' });
    expect(applied.metadata?.uid).toBeTruthy();
    expect((await readObject(client, { apiVersion: crb.apiVersion, kind: crb.kind, name }))?.metadata?.uid).toBe(applied.metadata?.uid);
  });

  it('explains a namespaced object without namespace and an unknown kind', async () => {
    await expect(applyObject(client, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' } }, { fieldManager: 't' })).rejects.toThrow(
      /namespaced but has no namespace/,
    );
    await expect(applyObject(client, { apiVersion: 'v1', kind: 'Gadget', metadata: { name: 'x' } }, { fieldManager: 't' })).rejects.toThrow(
      /no kind Gadget in v1/,
    );
  });
});

describe('jsonPatchGuarded', () => {
  const cp = inject('controlPlane');
  const kc = kubeConfigFrom(cp.kubeconfigPath);
  const client = loadKubeClient(cp.kubeconfigPath);
  const admission = kc.makeApiClient(AdmissionregistrationV1Api);

  it('patches only the caBundle while the object is unchanged, and reports a conflict when it is stale', async () => {
    const name = `outrigger-guarded-${Date.now()}`;
    // A webhook that can never match anything: harmless to the other tests on this apiserver.
    await admission.createMutatingWebhookConfiguration({
      body: {
        metadata: { name },
        webhooks: [
          {
            name: 'never.outrigger.io',
            admissionReviewVersions: ['v1'],
            sideEffects: 'None',
            failurePolicy: 'Ignore',
            clientConfig: { url: 'https://127.0.0.1:1/mutate' },
            namespaceSelector: { matchLabels: { 'outrigger.io/never': 'true' } },
            rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
          },
        ],
      },
    });
    try {
      const ref = { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'MutatingWebhookConfiguration', name };
      const before = await readObject(client, ref);
      const rv = before?.metadata?.resourceVersion as string;
      const caBundle = Buffer.from('-----BEGIN CERTIFICATE-----\n').toString('base64');
      const patch = [{ op: 'add' as const, path: jsonPointer('webhooks', 0, 'clientConfig', 'caBundle'), value: caBundle }];

      const done = await jsonPatchGuarded(client, ref, rv, patch, { fieldManager: 'outrigger-cert-manager' });
      expect(done.applied).toBe(true);
      const after = await admission.readMutatingWebhookConfiguration({ name });
      expect(after.webhooks?.[0]?.clientConfig.caBundle).toBe(caBundle);
      expect(after.webhooks?.[0]?.clientConfig.url).toBe('https://127.0.0.1:1/mutate');

      const stale = await jsonPatchGuarded(client, ref, rv, patch);
      expect(stale).toEqual({ applied: false, reason: 'conflict', currentResourceVersion: after.metadata?.resourceVersion });

      const missing = await jsonPatchGuarded(client, { ...ref, name: `${name}-missing` }, rv, patch);
      expect(missing).toEqual({ applied: false, reason: 'notFound' });

      // A patch that is wrong in itself still throws, even with the right version.
      const invalid = await jsonPatchGuarded(client, ref, after.metadata?.resourceVersion as string, [
        { op: 'replace', path: '/webhooks/7/clientConfig/caBundle', value: 'x' },
      ]).catch((e: unknown) => e);
      expect(classifyApiError(invalid).kind).toBe('invalid');
    } finally {
      await admission.deleteMutatingWebhookConfiguration({ name });
    }
  });
});
