import { describe, expect, it } from 'vitest';
import type { AdmissionReview, JsonObject } from '@outrigger/admission';
import { applyPatchCopy, decodePatch, type ReviewOutcome, reviewResponse } from '@outrigger/admission';
import { type AgentProfile, referenceProfile } from '@outrigger/agent-profiles';
import { agentToken, type AgentToken } from './agent-token.js';
import { AGENT_TOKEN_VOLUME, agentTokenVolume, SERVICE_ACCOUNT_TOKEN_PATH } from './service-account-token.js';
import { sidecarExtension } from './sidecar-extension.js';
import { loadReview, requestObject, withAnnotations } from './testing/fixtures.js';
import { arrayAt, objectAt } from './testing/pods.js';

const AGENT_ONLY = referenceProfile();
const SHARED: AgentProfile = { ...AGENT_ONLY, serviceAccountToken: { agentOnly: false, podMayKeepToken: false } };
const MAY_KEEP: AgentProfile = { ...AGENT_ONLY, serviceAccountToken: { agentOnly: true, podMayKeepToken: true } };
const KEEP = 'xxl-agent/keep-pod-token';
const OWN_MOUNT = { name: AGENT_TOKEN_VOLUME, readOnly: true, mountPath: SERVICE_ACCOUNT_TOKEN_PATH };
const PLUGIN_MOUNT = { name: 'kube-api-access-7xk2p', readOnly: true, mountPath: SERVICE_ACCOUNT_TOKEN_PATH };
/** The profile's own volumes and mounts (its data directory), beside the token's. */
const DATA_MOUNTS = AGENT_ONLY.container.volumeMounts ?? [];
const DATA_VOLUMES = AGENT_ONLY.volumes ?? [];

function run(review: AdmissionReview, profile: AgentProfile): ReviewOutcome {
  return reviewResponse(review, [sidecarExtension({ profiles: [profile], injectorVersion: 'test' })]);
}

/** The pod the API server stores: the request object with the patch applied. */
function stored(review: AdmissionReview, outcome: ReviewOutcome): JsonObject {
  const patch = outcome.reply.response.patch;
  return applyPatchCopy(requestObject(review), patch ? decodePatch(patch) : []);
}

function container(pod: JsonObject, name: string): JsonObject {
  const found = arrayAt(pod, 'spec', 'containers').find((c) => (c as JsonObject)['name'] === name);
  if (!found) throw new Error(`no container ${name}`);
  return found as JsonObject;
}

function decided(profile: AgentProfile, pod: JsonObject): AgentToken {
  const token = agentToken(profile, pod);
  if ('type' in token) throw new Error(token.message);
  return token;
}

describe('the agent alone holds the token (serviceAccountToken.agentOnly)', () => {
  it('takes the token from every other container and gives the agent its own, read-only', () => {
    const review = loadReview('v1-pod-opted-in');
    const pod = stored(review, run(review, AGENT_ONLY));
    expect(objectAt(pod, 'spec')['automountServiceAccountToken']).toBe(false);
    expect(arrayAt(pod, 'spec', 'volumes')).toEqual([agentTokenVolume(), ...DATA_VOLUMES]);
    expect(container(pod, 'orders')['volumeMounts']).toEqual([]);
    expect(container(pod, 'metrics-exporter')['volumeMounts']).toEqual([]);
    expect(container(pod, 'xxl-agent')['volumeMounts']).toEqual([...DATA_MOUNTS, OWN_MOUNT]);
  });

  it('lets a pod keep its own token where the profile allows it, and refuses the annotation where it does not', () => {
    const keeping = withAnnotations(loadReview('v1-pod-opted-in'), { [KEEP]: 'true' });
    const pod = stored(keeping, run(keeping, MAY_KEEP));
    expect(objectAt(pod, 'spec')['automountServiceAccountToken']).toBeUndefined();
    expect(container(pod, 'orders')['volumeMounts']).toEqual([PLUGIN_MOUNT]);
    expect(container(pod, 'xxl-agent')['volumeMounts']).toEqual([...DATA_MOUNTS, OWN_MOUNT]);
    expect(arrayAt(pod, 'spec', 'volumes').map((v) => (v as JsonObject)['name'])).toEqual(['kube-api-access-7xk2p', AGENT_TOKEN_VOLUME, ...DATA_VOLUMES.map((v) => v.name)]);

    for (const profile of [AGENT_ONLY, SHARED]) {
      const refused = run(keeping, profile).reply.response;
      expect(refused.allowed).toBe(false);
      expect(refused.status).toMatchObject({
        code: 403,
        message: 'annotation xxl-agent/keep-pod-token: profile xxl-job does not let pods keep their own API token (spec.serviceAccountToken.podMayKeepToken is not true); remove the annotation',
      });
    }
    // "false" asks for nothing; a malformed value is refused like a malformed opt-in.
    expect(run(withAnnotations(loadReview('v1-pod-opted-in'), { [KEEP]: 'false' }), AGENT_ONLY).decision).toBe('injected');
    expect(run(withAnnotations(loadReview('v1-pod-opted-in'), { [KEEP]: 'yes' }), MAY_KEEP).reply.response.status?.code).toBe(400);
  });

  it('gives the agent its own token in a pod that turned its token off, whatever the profile', () => {
    for (const profile of [AGENT_ONLY, SHARED]) {
      const review = loadReview('v1-pod-init-containers');
      const pod = stored(review, run(review, profile));
      expect(container(pod, 'xxl-agent')['volumeMounts']).toEqual([...DATA_MOUNTS, OWN_MOUNT]);
      expect(arrayAt(pod, 'spec', 'volumes')).toContainEqual(agentTokenVolume());
    }
  });

  it('shares the pod token as before when the profile does not ask for agentOnly', () => {
    const review = loadReview('v1-pod-opted-in');
    const outcome = run(review, SHARED);
    expect(decodePatch(outcome.reply.response.patch ?? '').map((op) => `${op.op} ${op.path}`)).toEqual(['add /spec/containers/2', 'add /spec/volumes/1', 'add /metadata/annotations/xxl-agent~1status']);
    expect(container(stored(review, outcome), 'xxl-agent')['volumeMounts']).toEqual([...DATA_MOUNTS, PLUGIN_MOUNT]);
  });

  it('refuses a pod that uses the name of the agent token volume itself', () => {
    const ownVolume = loadReview('v1-pod-opted-in');
    arrayAt(requestObject(ownVolume), 'spec', 'volumes').push({ name: AGENT_TOKEN_VOLUME, secret: { secretName: 'someone-elses-token' } });
    expect(run(ownVolume, AGENT_ONLY).reply.response.status).toMatchObject({ code: 422, message: expect.stringContaining(`volume ${AGENT_TOKEN_VOLUME} is the name of the agent's token volume`) });
    const ownMount = loadReview('v1-pod-opted-in');
    (arrayAt(requestObject(ownMount), 'spec', 'containers')[0] as { volumeMounts: unknown[] }).volumeMounts.push({ name: AGENT_TOKEN_VOLUME, mountPath: '/token' });
    expect(run(ownMount, AGENT_ONLY).reply.response.status).toMatchObject({ code: 422, message: expect.stringContaining(`container orders mounts ${AGENT_TOKEN_VOLUME}`) });
  });
});

describe('agentToken: one decision for injecting and for verifying', () => {
  it.each<[string, AgentProfile, string, Record<string, string>]>([
    ['agentOnly', AGENT_ONLY, 'v1-pod-opted-in', {}],
    ['agentOnly, pod keeps its token', MAY_KEEP, 'v1-pod-opted-in', { [KEEP]: 'true' }],
    ['shared token', SHARED, 'v1-pod-opted-in', {}],
    ['shared token, pod without one', SHARED, 'v1-pod-init-containers', {}],
    ['agentOnly, a Deployment-made pod', AGENT_ONLY, 'v1-deployment-pod', {}],
  ])('%s: on the stored pod it expects exactly what the injection wrote', (_name, profile, fixture, annotations) => {
    const review = withAnnotations(loadReview(fixture), annotations);
    const pod = stored(review, run(review, profile));
    const token = decided(profile, pod);
    const mounts = container(pod, 'xxl-agent')['volumeMounts'];
    expect(mounts).toEqual([...DATA_MOUNTS, ...(token.mount ? [token.mount] : [])]);
    const volumes = arrayAt(pod, 'spec', 'volumes');
    if (token.volume) expect(volumes).toContainEqual(token.volume);
    else expect(volumes.map((v) => (v as JsonObject)['name'])).not.toContain(AGENT_TOKEN_VOLUME);
    if (token.podTokenRemoved) {
      expect(objectAt(pod, 'spec')['automountServiceAccountToken']).toBe(false);
      expect(JSON.stringify(pod)).not.toContain('kube-api-access-');
    }
  });
});
