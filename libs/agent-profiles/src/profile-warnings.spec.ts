import { describe, expect, it } from 'vitest';
import { clusterWideRules, profileWarnings } from './profile-warnings.js';
import { referenceProfile } from './reference-profile.js';

const XXL_JOB_PROFILE = referenceProfile();

const withRules = (kind: 'ClusterRoleBinding' | 'RoleBinding', rules: { apiGroups: string[]; resources: string[]; verbs: string[] }[]) => ({
  ...XXL_JOB_PROFILE,
  rbac: { clusterRole: 'r', binding: { kind, name: 'r' }, rules },
});

describe('profile warnings', () => {
  it('the reference profile grants only what the exec guard confines: nothing to say', () => {
    expect(profileWarnings(XXL_JOB_PROFILE)).toEqual([]);
  });

  it('names each ClusterRoleBinding rule that reaches every namespace', () => {
    const profile = withRules('ClusterRoleBinding', [
      { apiGroups: [''], resources: ['pods/exec', 'pods/attach'], verbs: ['create'] },
      { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] },
      { apiGroups: ['apps'], resources: ['pods/exec'], verbs: ['create'] },
    ]);
    expect(clusterWideRules(profile)).toEqual([
      'profile xxl-job: rbac.rules[1] (get, list on pods) applies in every namespace: the exec guard confines only pods/exec, pods/attach, pods/portforward; use rbac.binding.kind RoleBinding to keep it in the agent\'s own namespace',
      expect.stringContaining('rbac.rules[2] (create on pods/exec) applies in every namespace'),
    ]);
  });

  it('a RoleBinding profile keeps every rule in the agent namespace', () => {
    expect(clusterWideRules(withRules('RoleBinding', [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }]))).toEqual([]);
  });
});
