import { CoreV1Api } from '@kubernetes/client-node';
import { createTestNamespace, kubeConfigFrom } from '@outrigger/control-plane';
import { describe, expect, inject, it } from 'vitest';
import { EventRecorder, loadKubeClient } from '../src/index.js';

describe('EventRecorder', () => {
  const cp = inject('controlPlane');
  const kc = kubeConfigFrom(cp.kubeconfigPath);
  const client = loadKubeClient(cp.kubeconfigPath);
  const core = kc.makeApiClient(CoreV1Api);

  it('records an event that kubectl would show for the object (found by field selector)', async () => {
    const namespace = await createTestNamespace(kc, 'events');
    const pod = await core.createNamespacedPod({
      namespace,
      body: { metadata: { name: 'web' }, spec: { containers: [{ name: 'app', image: 'busybox:1.36' }] } },
    });
    const failures: string[] = [];
    const recorder = new EventRecorder(client, { component: 'outrigger-test', instance: 'replica-1', logger: (m) => failures.push(m) });
    const ref = { apiVersion: 'v1', kind: 'Pod', name: 'web', namespace, uid: pod.metadata?.uid };
    await recorder.warning(ref, 'AgentRbacFailed', 'cannot bind role xyz: forbidden');
    await recorder.normal(ref, 'AgentRbacSynced', 'bound 2 roles');
    expect(failures).toEqual([]);

    const events = await core.listNamespacedEvent({ namespace, fieldSelector: `involvedObject.uid=${pod.metadata?.uid}` });
    const byReason = Object.fromEntries(events.items.map((e) => [e.reason, e]));
    expect(Object.keys(byReason).sort()).toEqual(['AgentRbacFailed', 'AgentRbacSynced']);
    expect(byReason.AgentRbacFailed).toMatchObject({
      type: 'Warning',
      message: 'cannot bind role xyz: forbidden',
      involvedObject: { kind: 'Pod', name: 'web', namespace, uid: pod.metadata?.uid },
      source: { component: 'outrigger-test', host: 'replica-1' },
      reportingComponent: 'outrigger-test',
      reportingInstance: 'replica-1',
    });
    const byName = await core.listNamespacedEvent({ namespace, fieldSelector: 'involvedObject.name=web,involvedObject.kind=Pod' });
    expect(byName.items).toHaveLength(2);
  });

  it('records events about cluster-scoped objects in the default namespace', async () => {
    const recorder = new EventRecorder(client, { component: 'outrigger-test', instance: 'replica-1' });
    const name = `outrigger-events-${Date.now()}`;
    await recorder.normal({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', name }, 'Created', 'for pod a/b');
    const events = await core.listNamespacedEvent({ namespace: 'default', fieldSelector: `involvedObject.name=${name}` });
    expect(events.items.map((e) => e.reason)).toEqual(['Created']);
  });

  it('never throws: a failure goes to the logger with a readable reason', async () => {
    const failures: string[] = [];
    const recorder = new EventRecorder(client, { component: 'outrigger-test', instance: 'replica-1', logger: (m) => failures.push(m) });
    await expect(recorder.warning({ kind: 'Pod', name: 'x', namespace: 'no-such-namespace-here' }, 'Whatever', 'm')).resolves.toBeUndefined();
    expect(failures).toHaveLength(1);
    expect(failures[0]).toMatch(/could not record Warning event Whatever on Pod no-such-namespace-here\/x: HTTP 404 NotFound: namespaces "no-such-namespace-here" not found/);
    const throwingLogger = new EventRecorder(client, { component: 'c', instance: 'i', logger: () => { throw new Error('logger broke'); } });
    await expect(throwingLogger.normal({ kind: 'Pod', name: 'x', namespace: 'no-such-namespace-here' }, 'R', 'm')).resolves.toBeUndefined();
  });
});
