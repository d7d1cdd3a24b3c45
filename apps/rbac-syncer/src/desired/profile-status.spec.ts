import { referenceProfile } from '@outrigger/agent-profiles';
import { describe, expect, it } from 'vitest';
import { onlyCountsDiffer, profileStatus, type ProfileStatusInput } from './profile-status.js';

const rbac = { clusterRole: 'xxl-agent-exec', binding: { kind: 'ClusterRoleBinding' as const, name: 'xxl-agent-exec' }, rules: [] };
const now = new Date('2026-11-25T10:00:00.123Z');
const base: ProfileStatusInput = {
  verdict: { name: 'xxl-job', generation: 2, accepted: true, reason: 'Valid', message: 'generation 2 is in force', inForceGeneration: 2 },
  stored: [],
  rbac,
  missingPermissions: [],
  execGuardProblem: undefined,
  subjects: 3,
  now,
};

describe('profileStatus', () => {
  it('says the profile is accepted and its binding synced, with the subjects bound', () => {
    expect(profileStatus(base)).toEqual({
      observedGeneration: 2,
      boundSubjects: 3,
      conditions: [
        { type: 'Accepted', status: 'True', reason: 'Valid', message: 'generation 2 is in force', lastTransitionTime: '2026-11-25T10:00:00Z', observedGeneration: 2 },
        { type: 'Synced', status: 'True', reason: 'Synced', message: 'ClusterRoleBinding xxl-agent-exec.<namespace> (one per namespace) binds the ServiceAccounts of live agents to ClusterRole xxl-agent-exec', lastTransitionTime: '2026-11-25T10:00:00Z', observedGeneration: 2 },
      ],
    });
  });

  it('says which Pod Security Standard the agent in force meets', () => {
    expect(profileStatus({ ...base, profile: referenceProfile() }).agentPodSecurity).toBe('restricted');
    const weak = { ...referenceProfile(), container: { ...referenceProfile().container, securityContext: { privileged: true } }, dangerouslyAllowPodSecurity: 'privileged' as const };
    expect(profileStatus({ ...base, profile: weak }).agentPodSecurity).toBe('privileged');
  });

  it('keeps the transition time of a condition whose status did not change', () => {
    const stored = profileStatus(base).conditions;
    const later = profileStatus({ ...base, stored, subjects: 4, now: new Date('2026-11-25T11:00:00Z') });
    expect(later.conditions.map((c) => c.lastTransitionTime)).toEqual(['2026-11-25T10:00:00Z', '2026-11-25T10:00:00Z']);
  });

  it('refuses an invalid generation and says which one stays in force', () => {
    const verdict = { name: 'xxl-job', generation: 3, accepted: false, reason: 'Invalid' as const, message: 'spec.container.image: is required (generation 2 stays in force)', inForceGeneration: 2 };
    const status = profileStatus({ ...base, verdict });
    expect(status.observedGeneration).toBe(3);
    expect(status.conditions[0]).toMatchObject({ status: 'False', reason: 'Invalid', observedGeneration: 3 });
    expect(status.conditions[1]).toMatchObject({ status: 'True', reason: 'Synced', observedGeneration: 2 });
  });

  it.each<[string, Partial<ProfileStatusInput>, string, string]>([
    ['missing permissions', { missingPermissions: ['bind clusterroles.rbac.authorization.k8s.io named x'] }, 'False', 'MissingPermissions'],
    ['permissions not checked yet', { missingPermissions: undefined }, 'Unknown', 'Pending'],
    ['exec guard missing', { execGuardProblem: 'ValidatingAdmissionPolicy g not found' }, 'False', 'ExecGuardMissing'],
    ['a write refused', { writeFailure: 'HTTP 403 Forbidden: denied', execGuardProblem: 'ValidatingAdmissionPolicy g not found' }, 'False', 'WriteFailed'],
    ['no RBAC', { rbac: undefined }, 'True', 'NoRbac'],
    ['a foreign ClusterRole, permissions missing too', { foreignRole: true, missingPermissions: ['bind clusterroles named cluster-admin'] }, 'False', 'ForeignClusterRole'],
    ['a name taken by an object that is not ours', { notOurs: ['ClusterRoleBinding xxl-agent-exec.a'] }, 'False', 'NameTaken'],
    ['a namespace over the cap', { overCap: new Map([['greedy', 5000]]), maxPerNamespace: 1000 }, 'False', 'NamespaceOverCap'],
    ['nothing in force', { verdict: { ...base.verdict, accepted: false, reason: 'Invalid', inForceGeneration: undefined } }, 'False', 'NotInForce'],
  ])('Synced: %s', (_name, change, status, reason) => {
    expect(profileStatus({ ...base, ...change }).conditions[1]).toMatchObject({ status, reason });
  });

  it('names the binding and passes the API server\'s answer on when a write fails', () => {
    const writeFailure = 'HTTP 422 Invalid: clusterrolebindings.rbac.authorization.k8s.io "xxl-agent-exec" is forbidden: ValidatingAdmissionPolicy \'freeze\' with binding \'freeze\' denied request: frozen';
    expect(profileStatus({ ...base, writeFailure }).conditions[1]?.message).toBe(`ClusterRoleBinding xxl-agent-exec not in sync, retrying: ${writeFailure}`);
  });

  it('never tells the admin to grant the syncer a role that is not Outrigger\'s', () => {
    const message = profileStatus({ ...base, rbac: { ...rbac, clusterRole: 'cluster-admin' }, foreignRole: true, missingPermissions: ['bind clusterroles.rbac.authorization.k8s.io named cluster-admin'] }).conditions[1]?.message ?? '';
    expect(message).toContain('ClusterRole cluster-admin exists and is not managed by Outrigger');
    expect(message).not.toMatch(/grant/i);
  });

  it('sends the admin to the overlay installed from (or a ClusterRole of their own with Helm), never to apply the base over it', () => {
    const message = profileStatus({ ...base, missingPermissions: ['bind clusterroles.rbac.authorization.k8s.io named xxl-agent-exec'] }).conditions[1]?.message ?? '';
    expect(message).toMatch(/^the rbac-syncer lacks bind clusterroles\.rbac\.authorization\.k8s\.io named xxl-agent-exec: add them to ClusterRole outrigger-rbac-syncer in the overlay you installed from/);
    expect(message).toContain('never deploy/base/rbac-syncer over it');
    expect(message).toContain('with Helm, grant them in a ClusterRole of your own bound to ServiceAccount outrigger-rbac-syncer');
  });

  it('says a name taken by someone else is theirs, to be looked at before it is deleted or the profile names another', () => {
    const message = profileStatus({ ...base, notOurs: ['ClusterRoleBinding xxl-agent-exec.shop'] }).conditions[1]?.message ?? '';
    expect(message).toBe(
      "left alone, not Outrigger's: ClusterRoleBinding xxl-agent-exec.shop; find out whose they are and what they grant, then delete them, or give spec.rbac.binding another name, to let the rbac-syncer create its own",
    );
  });

  it('names the namespaces over the cap, at most five of them', () => {
    const overCap = new Map(['f', 'e', 'd', 'c', 'b', 'a'].map((ns) => [ns, 2000]));
    const message = profileStatus({ ...base, overCap, maxPerNamespace: 1000 }).conditions[1]?.message;
    expect(message).toContain('over the cap of 1000 ServiceAccounts each keep their first 1000 bound and no more: a (2000), b (2000), c (2000), d (2000), e (2000) and 1 more');
  });
});

describe('the agent counts on the status', () => {
  const profile = referenceProfile();
  const counts = (outdatedByHash: [string, number][], missing = 0) => ({
    current: 5,
    outdated: outdatedByHash.reduce((n, [, pods]) => n + pods, 0),
    missing,
    canary: 2,
    outdatedByHash: new Map(outdatedByHash),
    missingOwners: [],
  });

  it('lists the outdated pods by the revision that injected them, most first, and "unknown" for pods that name none', () => {
    const status = profileStatus({ ...base, profile, agents: counts([['aaa', 1], ['', 2], ['bbb', 4]], 3) });
    expect(status.agents).toEqual({
      current: 5,
      outdated: 7,
      missing: 3,
      outdatedRevisions: [
        { revision: 'xxl-job-bbb', pods: 4 },
        { revision: 'unknown', pods: 2 },
        { revision: 'xxl-job-aaa', pods: 1 },
      ],
    });
  });

  it('lists at most 16 revisions (the CRD maxItems), and no counts while no generation is in force', () => {
    const many = Array.from({ length: 20 }, (_, i): [string, number] => [`h${i}`, i + 1]);
    expect(profileStatus({ ...base, profile, agents: counts(many) }).agents?.outdatedRevisions).toHaveLength(16);
    expect(profileStatus({ ...base, agents: counts(many) }).agents).toBeUndefined();
  });

  it('counts the pods on the staged change only while the profile stages one', () => {
    expect(profileStatus({ ...base, profile, agents: counts([]) }).agents?.canary).toBeUndefined();
    const staged = { ...profile, canary: { namespaceSelector: {}, image: 'registry.local/agent:next' } };
    expect(profileStatus({ ...base, profile: staged, agents: counts([]) }).agents?.canary).toBe(2);
  });

  it('tells a change of counts alone from any other change', () => {
    const a = profileStatus({ ...base, profile, agents: counts([]) });
    const b = profileStatus({ ...base, profile, agents: counts([['aaa', 1]]) });
    expect(onlyCountsDiffer(a, b)).toBe(true);
    expect(onlyCountsDiffer(a, a)).toBe(false);
    expect(onlyCountsDiffer(a, profileStatus({ ...base, profile, agents: counts([['aaa', 1]]), subjects: 4, namespaces: 7 }))).toBe(true);
    expect(onlyCountsDiffer(a, profileStatus({ ...base, profile, agents: counts([]), missingPermissions: ['bind clusterroles'] }))).toBe(false);
  });
});
