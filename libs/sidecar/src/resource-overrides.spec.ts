import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { applyPatchCopy, decodePatch, type AdmissionReview, type JsonObject, reviewResponse } from '@outrigger/admission';
import { agentProfileSchema, type AgentProfile, OVERRIDABLE_RESOURCES, parseProfiles, quantityValue } from '@outrigger/agent-profiles';
import { canonicalQuantity } from './canonical-quantity.js';
import { sidecarExtension } from './sidecar-extension.js';
import { loadReview, loadTextFixture, requestObject, withAnnotations } from './testing/fixtures.js';
import { arrayAt } from './testing/pods.js';
import { verifyInjectedAgent } from './verify-injected-agent.js';

const BASE = (() => {
  const parsed = parseProfiles(loadTextFixture('profiles/config-agent.yaml'));
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.value[0] as AgentProfile;
})();
const BOUNDS = [
  { resource: 'requests.memory', min: '16Mi', max: '256Mi' },
  { resource: 'limits.memory', min: '32Mi', max: '512Mi' },
  { resource: 'limits.cpu', min: '100m', max: '2' },
];
const PROFILE = agentProfileSchema.parse({ ...BASE, overrides: { resources: BOUNDS } });
const PREFIX = 'config-agent.example.com/';

function run(pod: Record<string, string>, namespace?: Record<string, string>, profile: AgentProfile = PROFILE) {
  const review: AdmissionReview = withAnnotations(loadReview('v1-pod-no-annotations'), { [`${PREFIX}enable`]: 'true', ...pod });
  const extension = sidecarExtension({ profiles: [profile], injectorVersion: 'test', namespaceAnnotations: () => namespace });
  const outcome = reviewResponse(review, [extension]);
  const encoded = outcome.reply.response.patch;
  const patched = applyPatchCopy(requestObject(review), encoded === undefined ? [] : decodePatch(encoded));
  const agent = arrayAt(patched, 'spec', 'containers').find((c) => (c as JsonObject)['name'] === 'config-agent') as JsonObject | undefined;
  return { outcome, pod: patched, resources: agent?.['resources'], message: outcome.reply.response.status?.message };
}

describe('resource overrides within the profile\'s bounds', () => {
  it('takes the namespace\'s default, and the pod\'s annotation over it', () => {
    expect(run({}, { [`${PREFIX}limits.memory`]: '128Mi' }).resources).toEqual({ limits: { memory: '128Mi' } });
    expect(run({ [`${PREFIX}limits.memory`]: '256Mi', [`${PREFIX}requests.memory`]: '64Mi' }, { [`${PREFIX}limits.memory`]: '128Mi' }).resources).toEqual({ limits: { memory: '256Mi' }, requests: { memory: '64Mi' } });
    expect(run({}).resources).toEqual({ limits: { memory: '64Mi' } });
  });

  it('refuses, naming the annotation, where it is and the bound: out of bounds, malformed, not allowed, a request above its limit', () => {
    expect(run({ [`${PREFIX}limits.memory`]: '1Gi' })).toMatchObject({ outcome: { decision: 'denied:resource-override' }, message: 'annotation config-agent.example.com/limits.memory: "1Gi" is outside the bounds of profile config-agent: limits.memory from 32Mi to 512Mi' });
    expect(run({}, { [`${PREFIX}limits.memory`]: '8Mi' }).message).toBe(
      'annotation config-agent.example.com/limits.memory of namespace shop: "8Mi" is outside the bounds of profile config-agent: limits.memory from 32Mi to 512Mi',
    );
    expect(run({ [`${PREFIX}limits.cpu`]: 'lots' }).message).toBe('annotation config-agent.example.com/limits.cpu: "lots" is not a Kubernetes quantity like 100m or 64Mi');
    // E alone is exa: far above the bound, not 1.
    expect(run({ [`${PREFIX}limits.cpu`]: '1E' }).message).toBe('annotation config-agent.example.com/limits.cpu: "1E" is outside the bounds of profile config-agent: limits.cpu from 100m to 2');
    // Exponents no resource has are refused at once, not computed (one annotation must not hold the injector's thread).
    for (const huge of ['1e100000000', '1e99999999999', '1e-99999999999']) {
      expect(run({ [`${PREFIX}limits.cpu`]: huge })).toMatchObject({ outcome: { decision: 'denied:resource-override' }, message: `annotation config-agent.example.com/limits.cpu: "${huge}" lies beyond any resource (more than 64 digits, or an exponent beyond ±64)` });
    }
    expect(run({ [`${PREFIX}requests.cpu`]: '1' }).message).toBe(
      'annotation config-agent.example.com/requests.cpu: profile config-agent does not let requests.cpu of its agent be changed (spec.overrides.resources has no requests.cpu); remove the annotation',
    );
    expect(run({ [`${PREFIX}requests.memory`]: '128Mi' }).message).toBe('annotation config-agent.example.com/requests.memory: the agent\'s memory request 128Mi would be above its limit 64Mi');
    const { overrides: _overrides, ...fixed } = BASE;
    expect(run({ [`${PREFIX}limits.memory`]: '64Mi' }, undefined, fixed).message).toMatch(/does not let limits\.memory of its agent be changed/);
  });

  it('verifies an agent whose overridable resources lie within bounds, as stored, and no other', () => {
    const { pod } = run({ [`${PREFIX}limits.memory`]: '0.25Gi' });
    expect(verifyInjectedAgent(pod, PROFILE)).toEqual({ ok: true });
    const beyond = structuredClone(pod);
    const agent = arrayAt(beyond, 'spec', 'containers').find((c) => (c as JsonObject)['name'] === 'config-agent') as JsonObject;
    agent['resources'] = { limits: { memory: '1Gi' } };
    expect(verifyInjectedAgent(beyond, PROFILE)).toMatchObject({ ok: false, problem: expect.stringContaining('resources') });
    agent['resources'] = { limits: { memory: '64Mi', cpu: '500m' } };
    expect(verifyInjectedAgent(beyond, PROFILE)).toEqual({ ok: true });
    agent['resources'] = { limits: { memory: '64Mi' }, requests: { cpu: '500m' } };
    expect(verifyInjectedAgent(beyond, PROFILE)).toMatchObject({ ok: false });
    // A stored quantity no resource has is a difference, never a throw (a throw would admit the pod unchecked).
    for (const huge of ['1e2000000000', '1e-99999999999', '1E']) {
      agent['resources'] = { limits: { memory: huge } };
      expect(verifyInjectedAgent(beyond, PROFILE)).toMatchObject({ ok: false });
    }
  });

  it('property: every accepted override stays within its bounds, and no request ends above its limit', () => {
    const quantity = fc.oneof(
      fc.integer({ min: 0, max: 4096 }).map((n) => `${n}Mi`),
      fc.integer({ min: 0, max: 4000 }).map((n) => `${n}m`),
      fc.integer({ min: 0, max: 8 }).map(String),
      fc.constantFrom('0.5Gi', '1e3', 'x', '', '-1Mi', '1.5'),
    );
    const annotations = fc.dictionary(fc.constantFrom(...OVERRIDABLE_RESOURCES), quantity);
    const decisions = new Set<string>();
    fc.assert(
      fc.property(annotations, annotations, (onPod, onNamespace) => {
        const prefixed = (values: Record<string, string>) => Object.fromEntries(Object.entries(values).map(([k, v]) => [`${PREFIX}${k}`, v]));
        const { outcome, resources } = run(prefixed(onPod), prefixed(onNamespace));
        decisions.add(outcome.decision);
        if (outcome.decision !== 'injected') return;
        const given = { ...onNamespace, ...onPod };
        for (const [resource, value] of Object.entries(given)) {
          const bound = BOUNDS.find((b) => b.resource === resource);
          expect(bound, resource).toBeDefined();
          const v = quantityValue(value) ?? -1n;
          expect(v >= (quantityValue(bound?.min ?? '') ?? 0n) && v <= (quantityValue(bound?.max ?? '') ?? 0n), `${resource}=${value}`).toBe(true);
        }
        const r = resources as { requests?: Record<string, string>; limits?: Record<string, string> };
        for (const name of ['cpu', 'memory']) {
          const request = r.requests?.[name];
          const limit = r.limits?.[name];
          if (request !== undefined && limit !== undefined) expect((quantityValue(request) ?? 0n) <= (quantityValue(limit) ?? 0n)).toBe(true);
        }
      }),
      { numRuns: 300 },
    );
    // Both sides were exercised: some overrides accepted, some refused.
    expect([...decisions].sort()).toEqual(['denied:resource-override', 'injected']);
  });

  it('compares quantities as the API server orders them', () => {
    const pairs: [string, string][] = [['1Gi', '1024Mi'], ['0.5', '500m'], ['1e3', '1k'], ['1n', '1n']];
    for (const [a, b] of pairs) expect(quantityValue(a)).toBe(quantityValue(b));
    expect((quantityValue('1Mi') ?? 0n) > (quantityValue('1M') ?? 0n)).toBe(true);
    expect(canonicalQuantity('0.25Gi')).toBe('256Mi');
  });
});
