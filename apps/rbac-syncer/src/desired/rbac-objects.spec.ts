import { referenceProfile } from '@outrigger/agent-profiles';
import { describe, expect, it } from 'vitest';
import { bindingIn, desiredClusterRole, MANAGED_BY_LABEL, NAMESPACE_LABEL, sameRules } from './rbac-objects.js';

const XXL_JOB_PROFILE = referenceProfile();

// The reference profile's role with a second rule, so order and per-rule differences are exercised.
const reference = XXL_JOB_PROFILE.rbac ?? { clusterRole: 'none', binding: { kind: 'ClusterRoleBinding' as const, name: 'none' }, rules: [] };
const rbac = { ...reference, rules: [...reference.rules, { apiGroups: [''], resources: ['pods/log'], verbs: ['get'] }] };
const sa = (namespace: string, name = 'default') => ({ kind: 'ServiceAccount' as const, namespace, name });

describe('RBAC object builders', () => {
  it('builds the ClusterRole with exactly the profile rules, labelled as ours', () => {
    const role = desiredClusterRole('xxl-job', rbac);
    expect(role.metadata).toEqual({ name: 'xxl-agent-exec', labels: { [MANAGED_BY_LABEL]: 'outrigger-rbac-syncer', 'outrigger.dev/profile': 'xxl-job' } });
    expect(role.rules).toEqual(rbac.rules);
    expect(sameRules([...role.rules].reverse(), rbac.rules)).toBe(true);
    expect(sameRules([role.rules[0]], rbac.rules)).toBe(false);
    expect(sameRules([{ ...role.rules[0], verbs: ['create', 'get', 'delete'] }, role.rules[1]], rbac.rules)).toBe(false);
  });

  it('builds one ClusterRoleBinding per namespace, named and labelled for it', () => {
    const binding = bindingIn('xxl-job', rbac, 'team-a', [sa('team-a'), sa('team-a', 'agent')]);
    expect(binding.kind).toBe('ClusterRoleBinding');
    expect(binding.metadata).toEqual({
      name: 'xxl-agent-exec.team-a',
      labels: { [MANAGED_BY_LABEL]: 'outrigger-rbac-syncer', 'outrigger.dev/profile': 'xxl-job', [NAMESPACE_LABEL]: 'team-a' },
    });
    expect(binding.roleRef).toEqual({ apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'xxl-agent-exec' });
    expect(binding.subjects).toEqual([sa('team-a'), sa('team-a', 'agent')]);
  });

  it('builds a RoleBinding in the namespace for RoleBinding profiles', () => {
    const binding = bindingIn('xxl-job', { ...rbac, binding: { kind: 'RoleBinding', name: 'xxl-agent-exec' } }, 'b', [sa('b')]);
    expect(binding.metadata).toEqual({ name: 'xxl-agent-exec', namespace: 'b', labels: { [MANAGED_BY_LABEL]: 'outrigger-rbac-syncer', 'outrigger.dev/profile': 'xxl-job' } });
    expect(binding.kind).toBe('RoleBinding');
  });
});
