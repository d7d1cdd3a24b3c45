import fastJsonPatch from 'fast-json-patch';
import { describe, expect, it } from 'vitest';
import { injectionPatch } from './independent-webhook.js';
import { applyInjection, observedInjection, type StoredPod, withoutIdentity } from './observed-injection.js';

// A pod as the API server stores it without a webhook (the ServiceAccount plugin gave it a token),
// and as an agent-only-token injector leaves it.
const plain: StoredPod = {
  metadata: { name: 'p-1', uid: 'a', annotations: { 'agent/enable': 'true' } },
  spec: {
    serviceAccountName: 'default',
    containers: [{ name: 'app', image: 'app:1', volumeMounts: [{ name: 'kube-api-access-abcde', mountPath: '/var/run/secrets/kubernetes.io/serviceaccount', readOnly: true }] }],
    volumes: [{ name: 'kube-api-access-abcde', projected: { sources: [] } }],
  },
};
const injected: StoredPod = {
  metadata: { name: 'p-2', uid: 'b', annotations: { 'agent/enable': 'true', 'agent/status': '{"profile":"agent"}' } },
  spec: {
    serviceAccountName: 'default',
    automountServiceAccountToken: false,
    containers: [{ name: 'app', image: 'app:1' }, { name: 'agent', image: 'agent:1', volumeMounts: [{ name: 'agent-token', mountPath: '/var/run/secrets/kubernetes.io/serviceaccount' }] }],
    volumes: [{ name: 'agent-token', projected: { sources: [] } }],
  },
};

describe('the independent peer repeats what the injector did', () => {
  it('reads the injection from the pod without and with the webhook', () => {
    expect(observedInjection(plain, injected)).toEqual({
      containers: [injected.spec.containers[1]],
      volumes: injected.spec.volumes,
      annotations: { 'agent/status': '{"profile":"agent"}' },
      spec: { automountServiceAccountToken: false },
      dropServiceAccountToken: true,
    });
  });

  it('its JSON patch turns another plain pod (another token volume suffix) into the injected one', () => {
    const other = JSON.parse(JSON.stringify(plain).replace(/abcde/g, 'zyxwv')) as StoredPod;
    const patched = fastJsonPatch.applyPatch(structuredClone(other), injectionPatch(other, observedInjection(plain, injected)) as fastJsonPatch.Operation[]).newDocument;
    expect(withoutIdentity(patched)).toEqual(withoutIdentity(injected));
    expect(withoutIdentity(patched)).toEqual(withoutIdentity(applyInjection(other, observedInjection(plain, injected))));
  });

  it('sends no patch for a pod that has the agent already (reinvocation)', () => {
    expect(injectionPatch(injected, observedInjection(plain, injected))).toEqual([]);
  });

  it('refuses a webhook change it cannot repeat, naming where', () => {
    const changedApp = { ...injected, spec: { ...injected.spec, containers: [{ name: 'app', image: 'app:2' }, ...injected.spec.containers.slice(1)] } };
    expect(() => observedInjection(plain, changedApp)).toThrow('/spec/containers/0/image: "app:1" vs "app:2"');
  });
});
