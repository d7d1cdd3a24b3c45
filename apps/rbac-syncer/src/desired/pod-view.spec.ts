import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { type AdmissionContext, type JsonObject, mutatePod } from '@outrigger/admission';
import { referenceProfile } from '@outrigger/agent-profiles';
import { sidecarExtension } from '@outrigger/sidecar';
import { describe, expect, it } from 'vitest';
import { projectPod } from './pod-view.js';

const XXL_JOB_PROFILE = referenceProfile();

const profiles = [XXL_JOB_PROFILE];

// A real opted-in pod as the API server sends it to the webhook (namespace shop), before injection.
const review = JSON.parse(readFileSync(fileURLToPath(new URL('../../../../libs/admission/fixtures/reviews/v1-pod-opted-in.json', import.meta.url)), 'utf8')) as {
  request: { object: JsonObject };
};
const optedIn = (): JsonObject => structuredClone(review.request.object);

/** The same pod after the injector's own sidecar extension, as it is stored and watched. */
function injected(): JsonObject {
  const ctx = { uid: 'u', namespace: 'shop', name: 'orders-worker', operation: 'CREATE', dryRun: false } as unknown as AdmissionContext;
  const result = mutatePod(optedIn(), ctx, [sidecarExtension({ profiles, injectorVersion: 'test' })]);
  if (result.outcome !== 'allowed') throw new Error(result.message);
  return result.pod;
}

type Pod = { metadata: { annotations: Record<string, string>; deletionTimestamp?: string }; spec: { containers: JsonObject[]; serviceAccountName?: string }; status?: JsonObject };
const edit = (pod: JsonObject, change: (p: Pod) => void): JsonObject => (change(pod as unknown as Pod), pod);

describe('projectPod', () => {
  it('keeps namespace, ServiceAccount and the profiles whose injected agent the pod carries', () => {
    expect(projectPod(injected(), profiles)).toEqual({ namespace: 'shop', serviceAccount: 'default', profiles: ['xxl-job'], deleting: false });
    expect(projectPod(edit(injected(), (p) => (p.spec.serviceAccountName = 'agent')), profiles)?.serviceAccount).toBe('agent');
  });

  it('still recognises the agent of a running pod after the profile moved to a new image tag', () => {
    const upgraded = { ...XXL_JOB_PROFILE, container: { ...XXL_JOB_PROFILE.container, image: 'ghcr.io/outrigger/xxl-agent:1.1.0@sha256:' + 'a'.repeat(64) } };
    expect(projectPod(injected(), [upgraded])?.profiles).toEqual(['xxl-job']);
  });

  it('annotations alone never bind: opted in after creation, a hand-set status, an agent-named container that is not the agent', () => {
    expect(projectPod(optedIn(), profiles)).toBeUndefined();
    expect(projectPod(edit(optedIn(), (p) => (p.metadata.annotations['xxl-agent/status'] = '{"profile":"xxl-job"}')), profiles)).toBeUndefined();
    const ownContainer = (image: string) => edit(injected(), (p) => p.spec.containers.forEach((c) => c['name'] === 'xxl-agent' && (c['image'] = image)));
    expect(projectPod(ownContainer('docker.io/mallory/shell:latest'), profiles)).toBeUndefined();
    expect(projectPod(ownContainer('ghcr.io/outrigger/xxl-agent:1.0.0'), profiles)?.profiles).toEqual(['xxl-job']);
    const noStatus = edit(injected(), (p) => delete p.metadata.annotations['xxl-agent/status']);
    expect(projectPod(noStatus, profiles)).toBeUndefined();
    const otherProfile = edit(injected(), (p) => (p.metadata.annotations['xxl-agent/status'] = '{"profile":"other"}'));
    expect(projectPod(otherProfile, profiles)).toBeUndefined();
  });

  it('drops pods that opted out, are finished or have invalid annotations', () => {
    expect(projectPod(edit(injected(), (p) => (p.metadata.annotations['xxl-agent/enable'] = 'false')), profiles)).toBeUndefined();
    expect(projectPod(edit(injected(), (p) => (p.status = { phase: 'Succeeded' })), profiles)).toBeUndefined();
    expect(projectPod(edit(injected(), (p) => (p.status = { phase: 'Failed' })), profiles)).toBeUndefined();
    expect(projectPod(edit(injected(), (p) => (p.metadata.annotations['xxl-agent/enable'] = 'maybe')), profiles)).toBeUndefined();
  });

  it('marks pods being deleted', () => {
    expect(projectPod(edit(injected(), (p) => (p.metadata.deletionTimestamp = '2026-01-01T00:00:00Z')), profiles)?.deleting).toBe(true);
  });
});
