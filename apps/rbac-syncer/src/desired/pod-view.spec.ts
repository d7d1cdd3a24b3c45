import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { type AdmissionContext, type JsonObject, mutatePod } from '@outrigger/admission';
import { profileHash, referenceProfile } from '@outrigger/agent-profiles';
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

  it('recognises the agent of a running pod after a profile edit only through the spec that injected it', () => {
    const upgraded = { ...XXL_JOB_PROFILE, container: { ...XXL_JOB_PROFILE.container, image: 'ghcr.io/outrigger/xxl-agent:1.1.0@sha256:' + 'a'.repeat(64) } };
    expect(projectPod(injected(), [upgraded])).toBeUndefined();
    const revisions = (name: string, hash: string) => (name === 'xxl-job' && hash === profileHash(XXL_JOB_PROFILE) ? XXL_JOB_PROFILE : undefined);
    expect(projectPod(injected(), [upgraded], revisions)?.profiles).toEqual(['xxl-job']);
    // An edit that leaves the agent as it was (the RBAC rules, say) needs no earlier spec.
    const rulesOnly = { ...XXL_JOB_PROFILE, rbac: { ...(XXL_JOB_PROFILE.rbac as NonNullable<typeof XXL_JOB_PROFILE.rbac>), rules: [{ apiGroups: [''], resources: ['pods/exec'], verbs: ['create'] }] } };
    expect(projectPod(injected(), [rulesOnly])?.profiles).toEqual(['xxl-job']);
  });

  it('annotations alone never bind: opted in after creation, a hand-set status, an agent-named container that is not the agent', () => {
    expect(projectPod(optedIn(), profiles)).toBeUndefined();
    expect(projectPod(edit(optedIn(), (p) => (p.metadata.annotations['xxl-agent/status'] = '{"profile":"xxl-job"}')), profiles)).toBeUndefined();
    const ownContainer = (image: string) => edit(injected(), (p) => p.spec.containers.forEach((c) => c['name'] === 'xxl-agent' && (c['image'] = image)));
    expect(projectPod(ownContainer('docker.io/mallory/shell:latest'), profiles)).toBeUndefined();
    expect(projectPod(ownContainer(XXL_JOB_PROFILE.container.image), profiles)?.profiles).toEqual(['xxl-job']);
    expect(projectPod(ownContainer(XXL_JOB_PROFILE.container.image.replace(/:[^:/]*$/, ':other')), profiles)).toBeUndefined();
    const ownCommand = edit(injected(), (p) => p.spec.containers.forEach((c) => c['name'] === 'xxl-agent' && (c['command'] = ['sh', '-c', 'id'])));
    expect(projectPod(ownCommand, profiles)).toBeUndefined();
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
