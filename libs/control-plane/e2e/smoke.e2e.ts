import { CoreV1Api } from '@kubernetes/client-node';
import { describe, expect, inject, it } from 'vitest';
import { createTestNamespace, kubeConfigFrom } from '../src/index.js';

describe('local control plane', () => {
  const cp = inject('controlPlane');
  const kc = kubeConfigFrom(cp.kubeconfigPath);
  const core = kc.makeApiClient(CoreV1Api);

  it('runs a real kube-apiserver of the pinned version', () => {
    expect(cp.version).toMatch(/^v1\.3\d\.\d+$/);
  });

  it('stores a pod in a fresh namespace and reads it back', async () => {
    const namespace = await createTestNamespace(kc, 'smoke');
    await core.createNamespacedPod({
      namespace,
      body: { metadata: { name: 'hello' }, spec: { containers: [{ name: 'app', image: 'busybox:1.36' }] } },
    });
    const pod = await core.readNamespacedPod({ namespace, name: 'hello' });
    expect(pod.metadata?.namespace).toBe(namespace);
    expect(pod.spec?.containers.map((c) => c.name)).toEqual(['app']);
    expect(pod.spec?.serviceAccountName).toBe('default');
    expect(pod.metadata?.uid).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('enforces RBAC: an unknown user may not list pods', async () => {
    const sar = await kc.makeApiClient((await import('@kubernetes/client-node')).AuthorizationV1Api).createSubjectAccessReview({
      body: { spec: { user: 'nobody', resourceAttributes: { verb: 'list', resource: 'pods' } } },
    });
    expect(sar.status?.allowed).toBe(false);
  });
});
