import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { applyPatchCopy, decodePatch, type AdmissionReview, type JsonObject, reviewResponse } from '@outrigger/admission';
import { type AgentProfile, parseProfiles } from '@outrigger/agent-profiles';
import YAML from 'yaml';
import { withVolumeDefaults } from './agent-pod-parts.js';
import { injectManifests, uninjectManifests } from './manifests.js';
import { sidecarExtension } from './sidecar-extension.js';
import { loadReview, loadTextFixture, requestObject, withAnnotations } from './testing/fixtures.js';
import { arrayAt, objectAt } from './testing/pods.js';
import { verifyInjectedAgent } from './verify-injected-agent.js';

const CONFIG_AGENT = (() => {
  const parsed = parseProfiles(loadTextFixture('profiles/config-agent.yaml'));
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.value[0] as AgentProfile;
})();
const OPT_IN = { 'config-agent.example.com/enable': 'true' };

function run(review: AdmissionReview, profiles: AgentProfile[] = [CONFIG_AGENT]) {
  const outcome = reviewResponse(review, [sidecarExtension({ profiles, injectorVersion: 'test' })]);
  const encoded = outcome.reply.response.patch;
  return { outcome, pod: applyPatchCopy(requestObject(review), encoded === undefined ? [] : decodePatch(encoded)) };
}

/** The fixture pod with its spec changed. */
function withSpec(change: (spec: JsonObject) => void): AdmissionReview {
  const review = withAnnotations(loadReview('v1-pod-no-annotations'), OPT_IN);
  change(objectAt(requestObject(review), 'spec'));
  return review;
}

describe('the pod parts an agent brings (volumes, image pull secrets) and its container spec', () => {
  it('injects the container spec as the profile writes it, appends its volumes and pull secret, and records them for uninject', () => {
    const { outcome, pod } = run(withSpec(() => undefined));
    expect(outcome.decision).toBe('injected');
    const agent = arrayAt(pod, 'spec', 'containers').find((c) => (c as JsonObject)['name'] === 'config-agent') as JsonObject;
    expect(agent).toMatchObject({
      env: [{ name: 'AGENT_TOKEN', valueFrom: { secretKeyRef: { name: 'config-agent-credentials', key: 'token' } } }, { name: 'AGENT_MEMORY_MI', valueFrom: { resourceFieldRef: { resource: 'limits.memory', divisor: '1Mi' } } }],
      envFrom: [{ prefix: 'AGENT_', configMapRef: { name: 'config-agent-settings', optional: true } }],
      readinessProbe: { httpGet: { path: '/ready', port: 'health' } },
      lifecycle: { preStop: { sleep: { seconds: 1 } } },
    });
    // Its own mounts first, then the API token (the pod keeps the ServiceAccount plugin's token).
    expect((agent['volumeMounts'] as JsonObject[]).map((m) => m['name'])).toEqual(['config-agent-config', 'config-agent-scratch', 'kube-api-access-7xk2p']);
    expect(arrayAt(pod, 'spec', 'volumes').map((v) => (v as JsonObject)['name'])).toEqual(['kube-api-access-7xk2p', 'config-agent-config', 'config-agent-scratch']);
    expect(arrayAt(pod, 'spec', 'imagePullSecrets')).toEqual([{ name: 'config-agent-registry' }]);
    const status = JSON.parse(String(objectAt(pod, 'metadata', 'annotations')['config-agent.example.com/status'])) as JsonObject;
    expect(status).toMatchObject({ volumes: ['config-agent-config', 'config-agent-scratch'], imagePullSecrets: ['config-agent-registry'] });
    expect(verifyInjectedAgent(pod, CONFIG_AGENT)).toEqual({ ok: true });
  });

  it('adds a pull secret the pod already names once, and records only what it added', () => {
    const { pod } = run(withSpec((spec) => (spec['imagePullSecrets'] = [{ name: 'config-agent-registry' }])));
    expect(arrayAt(pod, 'spec', 'imagePullSecrets')).toEqual([{ name: 'config-agent-registry' }]);
    expect(String(objectAt(pod, 'metadata', 'annotations')['config-agent.example.com/status'])).not.toContain('imagePullSecrets');
    expect(verifyInjectedAgent(pod, CONFIG_AGENT)).toEqual({ ok: true });
  });

  it.each([
    ['a volume of the pod', (spec: JsonObject) => (arrayAt(spec, 'volumes').push({ name: 'config-agent-config', emptyDir: {} }), undefined), /profile config-agent brings volume config-agent-config, but the pod has a volume of that name/],
    [
      'a mount of a container',
      (spec: JsonObject) => ((arrayAt(spec, 'containers')[0] as JsonObject)['volumeMounts'] = [{ name: 'config-agent-scratch', mountPath: '/x' }]),
      /brings volume config-agent-scratch, but container orders mounts a volume of that name/,
    ],
  ])('refuses a pod whose names clash with the agent\'s volumes (%s), naming the clash', (_, change, message) => {
    const { outcome } = run(withSpec(change as (spec: JsonObject) => void));
    expect(outcome.reply.response).toMatchObject({ allowed: false, status: { code: 422 } });
    expect(outcome.reply.response.status?.message).toMatch(message);
    expect(outcome.decision).toBe('denied:volume-name-taken');
  });

  it('refuses two profiles that bring the same volume name into one pod', () => {
    const twin = { ...CONFIG_AGENT, name: 'twin', annotationPrefix: 'twin.example.com/', container: { ...CONFIG_AGENT.container, name: 'twin' } };
    const { outcome } = run(withAnnotations(withSpec(() => undefined), { 'twin.example.com/enable': 'true' }), [CONFIG_AGENT, twin]);
    expect(outcome.reply.response.status?.message).toMatch(/profile twin brings volume config-agent-config, but profile config-agent brings a volume of that name too/);
  });

  it('does not verify a pod whose agent volume or pull secret differs from what the injector adds', () => {
    const { pod } = run(withSpec(() => undefined));
    const volumes = arrayAt(pod, 'spec', 'volumes') as JsonObject[];
    const swapped = structuredClone(pod);
    (arrayAt(swapped, 'spec', 'volumes')[1] as JsonObject)['configMap'] = { name: 'someone-elses' };
    expect(verifyInjectedAgent(swapped, CONFIG_AGENT)).toEqual({ ok: false, problem: 'volume config-agent-config: configMap.name is not what the injector adds' });
    const noSecret = structuredClone(pod);
    delete objectAt(noSecret, 'spec')['imagePullSecrets'];
    expect(verifyInjectedAgent(noSecret, CONFIG_AGENT)).toEqual({ ok: false, problem: 'imagePullSecrets lacks config-agent-registry' });
    expect(volumes).toHaveLength(3);
  });

  it('does not verify a pod in which another container mounts a volume the agent brings: an ephemeral one added later, or one written into a copy', () => {
    const { pod } = run(withSpec(() => undefined));
    expect(verifyInjectedAgent(pod, CONFIG_AGENT)).toEqual({ ok: true });
    const debugged = structuredClone(pod);
    objectAt(debugged, 'spec')['ephemeralContainers'] = [{ name: 'dbg', image: 'busybox', volumeMounts: [{ name: 'config-agent-config', mountPath: '/d' }] }];
    expect(verifyInjectedAgent(debugged, CONFIG_AGENT)).toEqual({ ok: false, problem: 'container dbg mounts config-agent-config, a volume the agent brings' });
    const copied = structuredClone(pod);
    (arrayAt(copied, 'spec', 'containers')[0] as JsonObject)['volumeMounts'] = [{ name: 'config-agent-config', mountPath: '/d', subPath: 'x' }];
    expect(verifyInjectedAgent(copied, CONFIG_AGENT)).toEqual({ ok: false, problem: expect.stringMatching(/^container \S+ mounts config-agent-config, a volume the agent brings$/) });
    // The webhook refuses such a copy as a forged agent rather than taking it for injected.
    const review = withSpec(() => undefined);
    (requestObject(review) as { spec: unknown })['spec'] = objectAt(copied, 'spec');
    objectAt(requestObject(review), 'metadata')['annotations'] = objectAt(copied, 'metadata', 'annotations');
    const refused = run(review).outcome;
    expect(refused.decision).toBe('denied:forged-agent');
    expect(refused.reply.response.status?.message).toContain('mounts config-agent-config, a volume the agent brings');
  });

  it('fills in the volume defaults the API server stores', () => {
    expect(withVolumeDefaults({ name: 'c', configMap: { name: 'x' } })).toEqual({ name: 'c', configMap: { name: 'x', defaultMode: 420 } });
    expect(withVolumeDefaults({ name: 'h', hostPath: { path: '/var/log' } })).toEqual({ name: 'h', hostPath: { path: '/var/log', type: '' } });
    expect(withVolumeDefaults({ name: 'e', emptyDir: { medium: '', sizeLimit: '16384Ki' } })).toEqual({ name: 'e', emptyDir: { sizeLimit: '16Mi' } });
    expect(withVolumeDefaults({ name: 'p', projected: { sources: [{ downwardAPI: { items: [{ path: 'n', fieldRef: { fieldPath: 'metadata.name' } }] } }] } })).toEqual({
      name: 'p',
      projected: { sources: [{ downwardAPI: { items: [{ path: 'n', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.name' } }] } }], defaultMode: 420 },
    });
  });

  it('outrigger uninject removes the volumes and pull secret it added, and only those', () => {
    const template = (pullSecrets: string) =>
      `apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  selector:\n    matchLabels:\n      app: web\n  template:\n    metadata:\n      labels:\n        app: web\n      annotations:\n        config-agent.example.com/enable: "true"\n    spec:\n${pullSecrets}      containers:\n        - name: app\n          image: busybox\n      volumes:\n        - name: data\n          emptyDir: {}\n`;
    for (const original of [template(''), template('      imagePullSecrets:\n        - name: config-agent-registry\n'), template('      imagePullSecrets:\n        - name: mine\n')]) {
      const injected = injectManifests(original, { profiles: [CONFIG_AGENT], injectorVersion: 'test' });
      if (!injected.ok) throw new Error(injected.error);
      const spec = (YAML.parse(injected.value.yaml) as { spec: { template: { spec: JsonObject } } }).spec.template.spec;
      expect((spec['volumes'] as JsonObject[]).map((v) => v['name'])).toEqual(['data', 'config-agent-config', 'config-agent-scratch']);
      expect(spec['imagePullSecrets']).toContainEqual({ name: 'config-agent-registry' });
      const removed = uninjectManifests(injected.value.yaml, { profiles: [CONFIG_AGENT] });
      expect(removed.ok && removed.value.yaml).toBe(original);
    }
  });

  it('property: admission never produces a pod the API server would reject for a name clash (volumes, pull secrets, containers, mounts)', () => {
    const name = fc.constantFrom('data', 'cache', 'config-agent-config', 'config-agent-scratch', 'config-agent', 'orders', 'outrigger-agent-token');
    const pods = fc.record({
      volumes: fc.uniqueArray(name, { maxLength: 4 }),
      pullSecrets: fc.uniqueArray(fc.constantFrom('config-agent-registry', 'mine'), { maxLength: 2 }),
      containers: fc.uniqueArray(name, { minLength: 1, maxLength: 3 }),
      mountsOwn: fc.boolean(),
    });
    const decisions = new Set<string>();
    fc.assert(
      fc.property(pods, ({ volumes, pullSecrets, containers, mountsOwn }) => {
        const review = withSpec((spec) => {
          spec['volumes'] = volumes.map((v) => ({ name: v, emptyDir: {} }));
          if (pullSecrets.length > 0) spec['imagePullSecrets'] = pullSecrets.map((n) => ({ name: n }));
          // Each container mounts every volume of the pod (valid input), or none.
          spec['containers'] = containers.map((c) => ({ name: c, image: 'app:1', ...(mountsOwn && volumes.length > 0 ? { volumeMounts: volumes.map((v) => ({ name: v, mountPath: `/${v}` })) } : {}) }));
        });
        const { outcome, pod } = run(review);
        decisions.add(outcome.decision.split(':')[0] ?? '');
        if (outcome.decision !== 'injected') return;
        const spec = objectAt(pod, 'spec');
        const unique = (list: string) => {
          const names = (spec[list] === undefined ? [] : arrayAt(spec, list)).map((entry) => (entry as JsonObject)['name']);
          expect(new Set(names).size, `${list}: ${names.join(', ')}`).toBe(names.length);
          return names;
        };
        const podVolumes = new Set(unique('volumes'));
        unique('imagePullSecrets');
        const all = [...(spec['initContainers'] === undefined ? [] : arrayAt(spec, 'initContainers')), ...arrayAt(spec, 'containers')] as JsonObject[];
        expect(new Set(all.map((c) => c['name'])).size).toBe(all.length);
        for (const container of all) for (const mount of (container['volumeMounts'] ?? []) as JsonObject[]) expect(podVolumes.has(String(mount['name'])), `${String(container['name'])} mounts ${String(mount['name'])}`).toBe(true);
      }),
      { numRuns: 300 },
    );
    expect([...decisions].sort()).toEqual(['denied', 'injected']);
  });
});
