import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { applyPatchCopy, decodePatch, type JsonObject, reviewResponse } from '@outrigger/admission';
import { type AgentProfile, type AgentProfileInput, agentProfileSchema, referenceProfile } from '@outrigger/agent-profiles';
import { apiServerDefaults, serviceAccountPlugin, STORED_QUANTITIES } from './testing/api-server-model.js';
import { type GeneratedPod, podArbitrary, podCreateReview } from './testing/arbitraries.js';
import { imageRepository } from './injection-status.js';
import { sidecarExtension } from './sidecar-extension.js';
import { verifyInjectedAgent } from './verify-injected-agent.js';

const REFERENCE = referenceProfile();

/** Variations of the reference profile on what the API server defaults or rewrites (its securityContext is kept: profiles must meet Pod Security). */
const profileArbitrary: fc.Arbitrary<AgentProfile> = fc
  .record({
    nativeSidecar: fc.boolean(),
    image: fc.constantFrom(
      'ghcr.io/outrigger/xxl-agent:0.1.0',
      'ghcr.io/outrigger/xxl-agent',
      'ghcr.io/outrigger/xxl-agent:latest',
      `ghcr.io/outrigger/xxl-agent@sha256:${'a'.repeat(64)}`,
    ),
    imagePullPolicy: fc.option(fc.constantFrom('Always', 'IfNotPresent', 'Never'), { nil: undefined }),
    protocol: fc.option(fc.constantFrom('TCP', 'UDP'), { nil: undefined }),
    limits: fc.option(fc.record({ cpu: fc.constantFrom(...STORED_QUANTITIES.map(([given]) => given)), memory: fc.constantFrom('1024Mi', '1.5Gi', '2048Ki', '32Mi') }, { requiredKeys: [] }), { nil: undefined }),
    requests: fc.option(fc.record({ cpu: fc.constantFrom('0.25', '100m', 0.5), memory: fc.constantFrom('32Mi', '1024Mi') }, { requiredKeys: [] }), { nil: undefined }),
    dangerouslyAllowHostNamespaces: fc.option(fc.boolean(), { nil: undefined }),
  })
  .map((v) => {
    const { imagePullPolicy: _policy, ports: _ports, resources: _resources, ...container } = REFERENCE.container;
    const input: AgentProfileInput = {
      ...REFERENCE,
      nativeSidecar: v.nativeSidecar,
      container: {
        ...container,
        image: v.image,
        ...(v.imagePullPolicy ? { imagePullPolicy: v.imagePullPolicy } : {}),
        ports: [{ name: 'http-xxl-agent', containerPort: 9999, ...(v.protocol ? { protocol: v.protocol } : {}) }],
        ...(v.limits || v.requests ? { resources: { ...(v.limits ? { limits: v.limits } : {}), ...(v.requests ? { requests: v.requests } : {}) } } : {}),
      },
      ...(v.dangerouslyAllowHostNamespaces === undefined ? {} : { dangerouslyAllowHostNamespaces: v.dangerouslyAllowHostNamespaces }),
    };
    return agentProfileSchema.parse(input);
  })
  // A request above its limit is refused by the API server: not a pod the webhook ever stores.
  .filter((profile) => {
    const { limits = {}, requests = {} } = profile.container.resources ?? {};
    return Object.keys(requests).every((key) => limits[key] === undefined || storedValue(requests[key]) <= storedValue(limits[key]));
  });

function storedValue(quantity: string | number | undefined): number {
  const text = String(quantity);
  const units: Record<string, number> = { m: 1e-3, Ki: 1024, Mi: 1024 ** 2, Gi: 1024 ** 3, e3: 1e3 };
  const unit = Object.keys(units).find((suffix) => text.endsWith(suffix));
  return unit ? Number(text.slice(0, -unit.length)) * (units[unit] ?? 1) : Number(text);
}

interface Case {
  readonly generated: GeneratedPod;
  readonly profile: AgentProfile;
  readonly hostNetwork: boolean;
  readonly token: boolean;
}

const caseArbitrary: fc.Arbitrary<Case> = fc.record({
  generated: podArbitrary.filter((g) => g.optIn === 'enabled' || g.optIn === 'enabled-by-list'),
  profile: profileArbitrary,
  hostNetwork: fc.boolean(),
  token: fc.boolean(),
});

/** The pod as the API server stores it after the webhook, or undefined when the webhook refused it. */
function storedPod({ generated, profile, hostNetwork, token }: Case): JsonObject | undefined {
  let pod = structuredClone(generated.pod);
  if (hostNetwork) (pod['spec'] as JsonObject)['hostNetwork'] = true;
  if (token) pod = serviceAccountPlugin(pod);
  const outcome = reviewResponse(podCreateReview(apiServerDefaults(pod), generated.namespace), [sidecarExtension({ profiles: [profile], injectorVersion: '0.1.0' })]);
  if (!outcome.reply.response.allowed) return undefined;
  const patched = applyPatchCopy(apiServerDefaults(pod), decodePatch(outcome.reply.response.patch ?? ''));
  // The plugin runs again after the webhook changed the pod, then defaulting.
  return JSON.parse(JSON.stringify(apiServerDefaults(token ? serviceAccountPlugin(patched) : patched))) as JsonObject;
}

function agentOf(pod: JsonObject, profile: AgentProfile): JsonObject {
  const spec = pod['spec'] as Record<string, JsonObject[]>;
  const agent = [...(spec['containers'] ?? []), ...(spec['initContainers'] ?? [])].find((c) => c['name'] === profile.container.name);
  if (!agent) throw new Error('no agent in the stored pod');
  return agent;
}

/** Single changes a forger could make; each must make the agent not the injector's. */
const MUTATIONS: Readonly<Record<string, (pod: JsonObject, agent: JsonObject) => void>> = {
  'image tag': (_, a) => void (a['image'] = `${imageRepository(String(a['image']))}:9.9.9`),
  command: (_, a) => void (a['command'] = ['sh', '-c', 'cat /var/run/secrets/kubernetes.io/serviceaccount/token']),
  args: (_, a) => void (a['args'] = ['--debug']),
  workingDir: (_, a) => void (a['workingDir'] = '/tmp'),
  privileged: (_, a) => void (a['securityContext'] = { ...(a['securityContext'] as JsonObject | undefined), privileged: true }),
  'securityContext removed or added': (_, a) => void (a['securityContext'] === undefined ? (a['securityContext'] = { runAsUser: 0 }) : delete a['securityContext']),
  'env value': (_, a) => void ((a['env'] as JsonObject[])[0] = { name: 'XXL_JOB_ADDR', value: 'http://mallory.example/' }),
  'env added': (_, a) => void (a['env'] as JsonObject[]).push({ name: 'LD_PRELOAD', value: '/tmp/x.so' }),
  envFrom: (_, a) => void (a['envFrom'] = [{ secretRef: { name: 'db' } }]),
  'volume mount': (_, a) => void (a['volumeMounts'] = [...((a['volumeMounts'] as JsonObject[] | undefined) ?? []), { name: 'host', mountPath: '/host' }]),
  lifecycle: (_, a) => void (a['lifecycle'] = { postStart: { exec: { command: ['sh'] } } }),
  probe: (_, a) => void (a['livenessProbe'] = { exec: { command: ['sh'] }, periodSeconds: 10, timeoutSeconds: 1, successThreshold: 1, failureThreshold: 3 }),
  'unknown field': (_, a) => void (a['x-unknown'] = true),
  stdin: (_, a) => void (a['stdin'] = true),
  'resource limit': (_, a) => void (a['resources'] = { limits: { cpu: '8' }, requests: { cpu: '8' } }),
  'host port': (_, a) => void ((a['ports'] as JsonObject[])[0] = { ...(a['ports'] as JsonObject[])[0], hostPort: 9999 }),
  restartPolicy: (_, a) => void (a['restartPolicy'] === undefined ? (a['restartPolicy'] = 'Always') : delete a['restartPolicy']),
  'status annotation': (pod) => void delete ((pod['metadata'] as JsonObject)['annotations'] as JsonObject)['xxl-agent/status'],
  'other list': (pod, a) => {
    const spec = pod['spec'] as Record<string, JsonObject[]>;
    const from = spec['containers']?.includes(a) ? 'containers' : 'initContainers';
    spec[from] = (spec[from] ?? []).filter((c) => c !== a);
    spec[from === 'containers' ? 'initContainers' : 'containers'] = [...(spec[from === 'containers' ? 'initContainers' : 'containers'] ?? []), a];
  },
  'second agent': (pod, a) => void (pod['spec'] as Record<string, JsonObject[]>)['containers']?.push(structuredClone(a)),
  'node network without the profile allowing it': (pod) => void ((pod['spec'] as JsonObject)['hostNetwork'] = true),
  'pod keeps its token': (pod) => void ((pod['spec'] as JsonObject)['automountServiceAccountToken'] = true),
  'shared process namespace': (pod) => void ((pod['spec'] as JsonObject)['shareProcessNamespace'] = true),
  'a token volume of its own': (pod) => {
    const spec = pod['spec'] as Record<string, JsonObject[]>;
    spec['volumes'] = [...(spec['volumes'] ?? []), { name: 'mine', projected: { sources: [{ serviceAccountToken: { path: 'token' } }] } }];
  },
  "another container mounts the agent's token": (pod) => {
    const app = (pod['spec'] as Record<string, JsonObject[]>)['containers']?.[0];
    if (app) app['volumeMounts'] = [{ name: 'outrigger-agent-token', readOnly: true, mountPath: '/t' }];
  },
  "the agent's token volume": (pod) => {
    const volume = ((pod['spec'] as Record<string, JsonObject[]>)['volumes'] ?? []).find((v) => v['name'] === 'outrigger-agent-token');
    if (volume) volume['projected'] = { sources: [{ serviceAccountToken: { path: 'token', expirationSeconds: 86400 } }] };
  },
};

describe('verifyInjectedAgent over what the extension injects and the API server stores', () => {
  it('accepts every injected pod as stored (defaults applied, quantities canonical)', () => {
    fc.assert(
      fc.property(caseArbitrary, (c) => {
        const stored = storedPod(c);
        if (!stored) {
          expect(c.hostNetwork && c.profile.dangerouslyAllowHostNamespaces !== true).toBe(true);
          return;
        }
        expect(verifyInjectedAgent(stored, c.profile)).toEqual({ ok: true });
      }),
      { numRuns: 200 },
    );
  }, 30_000);

  it('refuses the pod after any single change of a security-relevant field', () => {
    fc.assert(
      fc.property(caseArbitrary, fc.constantFrom(...Object.keys(MUTATIONS)), (c, name) => {
        const stored = storedPod({ ...c, hostNetwork: false });
        if (!stored) throw new Error('an opted-in pod off the node network is injected');
        if (name === 'node network without the profile allowing it' && c.profile.dangerouslyAllowHostNamespaces === true) return;
        MUTATIONS[name]?.(stored, agentOf(stored, c.profile));
        const verdict = verifyInjectedAgent(stored, c.profile);
        expect(verdict.ok, `${name} passed`).toBe(false);
      }),
      { numRuns: 300 },
    );
  }, 30_000);
});
