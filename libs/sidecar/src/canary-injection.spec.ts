import { describe, expect, it } from 'vitest';
import { type AdmissionReview, applyPatchCopy, decodePatch, type JsonObject, reviewResponse } from '@outrigger/admission';
import { agentFor, type AgentProfile, agentVariants, profileHash, referenceProfile } from '@outrigger/agent-profiles';
import { agentState } from './agent-state.js';
import { statusAnnotation } from './injection-status.js';
import { sidecarExtension } from './sidecar-extension.js';
import { loadReview, requestObject } from './testing/fixtures.js';
import { arrayAt, objectAt } from './testing/pods.js';

const reference = referenceProfile();
const NEXT = `${reference.container.image}-next`;
const staged = { ...reference, canary: { namespaceSelector: { matchLabels: { ring: 'canary' } }, image: NEXT } } as AgentProfile;

/** The pod as stored after the webhook injected `profile` (as the injector gives it for the namespace). */
function injectedWith(profile: AgentProfile): JsonObject {
  const review: AdmissionReview = loadReview('v1-pod-opted-in');
  const outcome = reviewResponse(review, [sidecarExtension({ profiles: [profile], injectorVersion: 'test' })]);
  const patch = outcome.reply.response.patch;
  return applyPatchCopy(requestObject(review), patch ? decodePatch(patch) : []);
}

const agentImage = (pod: JsonObject) => (arrayAt(pod, 'spec', 'containers').find((c) => (c as JsonObject)['name'] === reference.container.name) as JsonObject)['image'];
const statusHash = (pod: JsonObject) => (JSON.parse(String(objectAt(pod, 'metadata', 'annotations')[statusAnnotation(reference)])) as { hash: string }).hash;

describe('injecting a profile that stages a change', () => {
  it('gives a namespace the canary selects the canary agent, stamped with its own hash, and current', () => {
    const pod = injectedWith(agentFor(staged, { ring: 'canary' }));
    expect(agentImage(pod)).toBe(NEXT);
    expect(statusHash(pod)).toBe(profileHash(agentVariants(staged).canary?.profile as AgentProfile));
    expect(agentState(pod, staged, [staged], () => undefined)).toEqual({ state: 'current', canary: true });
  });

  it('gives every other namespace, and a profile handed over whole (offline injection), the agent as before', () => {
    for (const profile of [agentFor(staged, { ring: 'stable' }), staged]) {
      const pod = injectedWith(profile);
      expect(agentImage(pod)).toBe(reference.container.image);
      expect(statusHash(pod)).toBe(profileHash(reference));
      expect(agentState(pod, staged, [staged], () => undefined)).toEqual({ state: 'current' });
    }
  });
});

describe('injecting a profile scoped to some namespaces (spec.namespaceSelector)', () => {
  const scoped = { ...reference, namespaceSelector: { matchLabels: { team: 'jobs' } } } as AgentProfile;
  const run = (labels: Record<string, string> | undefined) => {
    const review: AdmissionReview = loadReview('v1-pod-opted-in');
    return reviewResponse(review, [sidecarExtension({ profiles: [scoped], injectorVersion: 'test', namespaceLabels: () => labels })]);
  };

  it('injects where the selector picks the namespace, and elsewhere admits the pod unchanged with a warning naming the profile', () => {
    expect(run({ team: 'jobs' }).reply.response.patch).toBeDefined();
    for (const labels of [{ team: 'web' }, undefined]) {
      const outcome = run(labels);
      expect(outcome.reply.response.allowed).toBe(true);
      expect(outcome.reply.response.patch).toBeUndefined();
      expect(outcome.reply.response.warnings).toContain('profile xxl-job does not apply in namespace shop (its spec.namespaceSelector does not pick it): no agent');
    }
  });

  it('still refuses a forged agent of the profile where it does not apply', () => {
    const review: AdmissionReview = loadReview('v1-pod-already-injected');
    const outcome = reviewResponse(review, [sidecarExtension({ profiles: [{ ...scoped, container: { ...scoped.container, image: 'registry.local/other:1' } }], injectorVersion: 'test', namespaceLabels: () => ({ team: 'web' }) })]);
    expect(outcome.reply.response.allowed).toBe(false);
  });
});
