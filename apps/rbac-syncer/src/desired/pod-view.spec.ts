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

/** The profiles a pod's ServiceAccount is bound for. */
const bound = (pod: JsonObject, inForce = profiles, revisions?: Parameters<typeof projectPod>[2]) => projectPod(pod, inForce, revisions)?.profiles ?? [];
const stateOf = (pod: JsonObject, inForce = profiles) => projectPod(pod, inForce)?.agents[0]?.state;

/** The reference profile's spec stored as a revision, replaced at `replacedAt` if given. */
function earlierSpecs(replacedAt?: string, lagMs = 60_000) {
  const revision = { name: `xxl-job-${profileHash(XXL_JOB_PROFILE)}`, profile: XXL_JOB_PROFILE, hash: profileHash(XXL_JOB_PROFILE), revision: 1, ...(replacedAt ? { replacedAt: Date.parse(replacedAt) } : {}) };
  return { revisions: (name: string, hash: string) => (name === 'xxl-job' && hash === revision.hash ? revision : undefined), lagMs };
}

describe('projectPod', () => {
  it('keeps namespace, ServiceAccount, the profiles whose injected agent the pod carries and what it runs', () => {
    expect(projectPod(injected(), profiles)).toEqual({ namespace: 'shop', serviceAccount: 'default', profiles: ['xxl-job'], sharesToken: [], agents: [{ profile: 'xxl-job', state: 'current' }], deleting: false });
    expect(projectPod(edit(injected(), (p) => (p.spec.serviceAccountName = 'agent')), profiles)?.serviceAccount).toBe('agent');
  });

  it('recognises the agent of a running pod after a profile edit only through the spec that injected it', () => {
    const upgraded = { ...XXL_JOB_PROFILE, container: { ...XXL_JOB_PROFILE.container, image: 'ghcr.io/outrigger/xxl-agent:1.1.0@sha256:' + 'a'.repeat(64) } };
    expect(bound(injected(), [upgraded])).toEqual([]);
    expect(projectPod(injected(), [upgraded])?.agents).toEqual([{ profile: 'xxl-job', state: 'outdated', hash: profileHash(XXL_JOB_PROFILE) }]);
    expect(projectPod(injected(), [upgraded], earlierSpecs())?.profiles).toEqual(['xxl-job']);
    // An edit that leaves the agent as it was (the RBAC rules, say) needs no earlier spec.
    const rulesOnly = { ...XXL_JOB_PROFILE, rbac: { ...(XXL_JOB_PROFILE.rbac as NonNullable<typeof XXL_JOB_PROFILE.rbac>), rules: [{ apiGroups: [''], resources: ['pods/exec'], verbs: ['create'] }] } };
    expect(projectPod(injected(), [rulesOnly])?.profiles).toEqual(['xxl-job']);
    expect(stateOf(injected(), [rulesOnly])).toBe('current');
  });

  it('binds an earlier spec\'s agent only in a pod created while that spec was in force, or within the lag after', () => {
    const upgraded = { ...XXL_JOB_PROFILE, container: { ...XXL_JOB_PROFILE.container, image: 'ghcr.io/outrigger/xxl-agent:1.1.0@sha256:' + 'a'.repeat(64) } };
    const createdAt = (when: string) => edit(injected(), (p) => ((p.metadata as JsonObject)['creationTimestamp'] = when));
    const replaced = '2026-03-01T12:00:00Z';
    expect(bound(createdAt('2026-03-01T11:59:00Z'), [upgraded], earlierSpecs(replaced))).toEqual(['xxl-job']);
    expect(bound(createdAt('2026-03-01T12:01:00Z'), [upgraded], earlierSpecs(replaced))).toEqual(['xxl-job']);
    // Past the lag, only whoever wrote the pod by hand (the webhook not called) can have put it there.
    expect(bound(createdAt('2026-03-01T12:01:01Z'), [upgraded], earlierSpecs(replaced))).toEqual([]);
    expect(projectPod(createdAt('2026-03-01T12:01:01Z'), [upgraded], earlierSpecs(replaced))?.agents).toEqual([{ profile: 'xxl-job', state: 'outdated', hash: profileHash(XXL_JOB_PROFILE) }]);
    // A pod without a creation time (never from the API server) is not taken for one created in time.
    expect(bound(injected(), [upgraded], earlierSpecs(replaced))).toEqual([]);
    // Not replaced (yet, or on a revision of an earlier version): as before.
    expect(bound(createdAt('2030-01-01T00:00:00Z'), [upgraded], earlierSpecs())).toEqual(['xxl-job']);
    // The spec in force needs no window.
    expect(bound(createdAt('2030-01-01T00:00:00Z'), profiles, earlierSpecs(replaced))).toEqual(['xxl-job']);
  });

  it('annotations alone never bind: opted in after creation, a hand-set status, an agent-named container that is not the agent', () => {
    expect(bound(optedIn())).toEqual([]);
    expect(stateOf(optedIn())).toBe('missing');
    expect(bound(edit(optedIn(), (p) => (p.metadata.annotations['xxl-agent/status'] = '{"profile":"xxl-job"}')))).toEqual([]);
    const ownContainer = (image: string) => edit(injected(), (p) => p.spec.containers.forEach((c) => c['name'] === 'xxl-agent' && (c['image'] = image)));
    expect(bound(ownContainer('docker.io/mallory/shell:latest'))).toEqual([]);
    expect(projectPod(ownContainer(XXL_JOB_PROFILE.container.image), profiles)?.profiles).toEqual(['xxl-job']);
    expect(bound(ownContainer(XXL_JOB_PROFILE.container.image.replace(/:[^:/]*$/, ':other')))).toEqual([]);
    const ownCommand = edit(injected(), (p) => p.spec.containers.forEach((c) => c['name'] === 'xxl-agent' && (c['command'] = ['sh', '-c', 'id'])));
    expect(bound(ownCommand)).toEqual([]);
    const noStatus = edit(injected(), (p) => delete p.metadata.annotations['xxl-agent/status']);
    expect(bound(noStatus)).toEqual([]);
    const otherProfile = edit(injected(), (p) => (p.metadata.annotations['xxl-agent/status'] = '{"profile":"other"}'));
    expect(bound(otherProfile)).toEqual([]);
    // A container field newer than the protobuf schema is read as such a mark (libs/kube protobuf-schema.ts): never bound.
    const unreadField = edit(injected(), (p) => p.spec.containers.forEach((c) => c['name'] === 'xxl-agent' && (c['(protobuf field 99)'] = true)));
    expect(bound(unreadField)).toEqual([]);
    // A debug container added later that targets the agent (kubectl debug --target) shares its files, the token among them.
    const debugged = edit(injected(), (p) => ((p.spec as Record<string, unknown>)['ephemeralContainers'] = [{ name: 'debugger', image: 'busybox', targetContainerName: 'xxl-agent' }]));
    expect(bound(debugged)).toEqual([]);
    expect(bound(edit(injected(), (p) => ((p.spec as Record<string, unknown>)['ephemeralContainers'] = [{ name: 'debugger', image: 'busybox', targetContainerName: 'app' }])))).toEqual(['xxl-job']);
  });

  it("marks the profiles whose agent's token other containers of the pod can reach, so that no pod of its ServiceAccount keeps it bound", () => {
    const sharesToken = (pod: JsonObject) => projectPod(pod, profiles)?.sharesToken;
    const ephemeral = (container: JsonObject) => edit(injected(), (p) => ((p.spec as Record<string, unknown>)['ephemeralContainers'] = [{ name: 'debugger', image: 'busybox', ...container }]));
    expect(sharesToken(injected())).toEqual([]);
    expect(sharesToken(ephemeral({ targetContainerName: 'xxl-agent' }))).toEqual(['xxl-job']);
    expect(sharesToken(ephemeral({ volumeMounts: [{ name: 'outrigger-agent-token', mountPath: '/t' }] }))).toEqual(['xxl-job']);
    expect(sharesToken(ephemeral({ volumeMounts: [{ name: 'xxl-agent-data', mountPath: '/d' }] }))).toEqual(['xxl-job']);
    expect(sharesToken(ephemeral({ targetContainerName: 'app' }))).toEqual([]);
    // Named like another profile's agent, an ephemeral container is still not an agent.
    const tracing = { ...XXL_JOB_PROFILE, name: 'tracing', annotationPrefix: 'tracing.example.com/', container: { ...XXL_JOB_PROFILE.container, name: 'trace-agent' } };
    const lookalike = edit(injected(), (p) => ((p.spec as Record<string, unknown>)['ephemeralContainers'] = [{ name: 'trace-agent', image: 'busybox', volumeMounts: [{ name: 'outrigger-agent-token', mountPath: '/t' }] }]));
    expect(projectPod(lookalike, [XXL_JOB_PROFILE, tracing])?.sharesToken).toEqual(['xxl-job']);
    // Not bound for other reasons (another image), the agent's token is still its own: nothing to mark.
    expect(sharesToken(edit(injected(), (p) => p.spec.containers.forEach((c) => c['name'] === 'xxl-agent' && (c['image'] = 'docker.io/mallory/shell:latest'))))).toEqual([]);
    // Never injected with a token of the agent's own: the pod's token is everyone's there anyway.
    expect(sharesToken(edit(optedIn(), (p) => ((p.spec as Record<string, unknown>)['shareProcessNamespace'] = true)))).toEqual([]);
  });

  it('drops pods that opted out, are finished or have invalid annotations', () => {
    expect(projectPod(edit(injected(), (p) => (p.metadata.annotations['xxl-agent/enable'] = 'false')), profiles)).toBeUndefined();
    expect(projectPod(edit(injected(), (p) => (p.status = { phase: 'Succeeded' })), profiles)).toBeUndefined();
    expect(projectPod(edit(injected(), (p) => (p.status = { phase: 'Failed' })), profiles)).toBeUndefined();
    expect(projectPod(edit(injected(), (p) => (p.metadata.annotations['xxl-agent/enable'] = 'maybe')), profiles)).toBeUndefined();
  });

  it('names the controller of pods that miss an agent, to tell their workload', () => {
    const owner = { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'orders-7c9', uid: 'u-7', controller: true };
    const owned = edit(optedIn(), (p) => ((p.metadata as JsonObject)['ownerReferences'] = [{ ...owner, controller: false, uid: 'other' }, owner]));
    expect(projectPod(owned, profiles)?.owner).toEqual({ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'orders-7c9', uid: 'u-7' });
    expect(projectPod(edit(injected(), (p) => ((p.metadata as JsonObject)['ownerReferences'] = [owner])), profiles)?.owner).toBeUndefined();
  });

  it('keeps no more of a pod than names and hashes of the sizes the API allows, whatever its author wrote', () => {
    const huge = 'x'.repeat(1_000_000);
    const owned = edit(optedIn(), (p) => ((p.metadata as JsonObject)['ownerReferences'] = [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: huge, uid: 'u-7', controller: true }]));
    expect(projectPod(owned, profiles)?.owner).toBeUndefined();
    const hashed = edit(optedIn(), (p) => (p.metadata.annotations['xxl-agent/status'] = JSON.stringify({ profile: 'xxl-job', hash: huge })));
    expect(projectPod(hashed, profiles)?.agents).toEqual([{ profile: 'xxl-job', state: 'outdated' }]);
  });

  it('binds a profile only for its own agent: a status naming another profile\'s revision through the joined name binds nothing', () => {
    // Profile `xxl` and profile `xxl-job`: revision `xxl-job-<hash>` is also `xxl` with hash `job-<hash>`.
    const short = { ...XXL_JOB_PROFILE, name: 'xxl', annotationPrefix: 'xxl/', container: { ...XXL_JOB_PROFILE.container, name: 'xxl-short-agent' } };
    const stored = { name: `xxl-job-${profileHash(XXL_JOB_PROFILE)}`, profile: XXL_JOB_PROFILE, hash: profileHash(XXL_JOB_PROFILE), revision: 1 };
    const joinedNames = { revisions: (name: string, hash: string) => (`${name}-${hash}` === stored.name ? stored : undefined), lagMs: 0 };
    const borrowed = edit(injected(), (p) => {
      p.metadata.annotations['xxl/enable'] = 'true';
      p.metadata.annotations['xxl/status'] = JSON.stringify({ profile: 'xxl', hash: `job-${profileHash(XXL_JOB_PROFILE)}` });
    });
    expect(bound(borrowed, [short, XXL_JOB_PROFILE], joinedNames)).toEqual(['xxl-job']);
  });

  it('marks pods being deleted', () => {
    expect(projectPod(edit(injected(), (p) => (p.metadata.deletionTimestamp = '2026-01-01T00:00:00Z')), profiles)?.deleting).toBe(true);
  });
});
