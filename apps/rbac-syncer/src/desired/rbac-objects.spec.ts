import { referenceProfile } from '@outrigger/agent-profiles';
import { describe, expect, it } from 'vitest';
import { desiredClusterRole, desiredClusterRoleBinding, desiredRoleBindings, MANAGED_BY_LABEL, sameRules } from './rbac-objects.js';

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

  it('builds one ClusterRoleBinding to the profile ClusterRole', () => {
    const binding = desiredClusterRoleBinding('xxl-job', rbac, [sa('a'), sa('b')]);
    expect(binding.kind).toBe('ClusterRoleBinding');
    expect(binding.metadata.name).toBe('xxl-agent-exec');
    expect(binding.metadata.labels[MANAGED_BY_LABEL]).toBe('outrigger-rbac-syncer');
    expect(binding.roleRef).toEqual({ apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'xxl-agent-exec' });
    expect(binding.subjects).toEqual([sa('a'), sa('b')]);
  });

  it('builds per-namespace RoleBindings holding only their own namespace subjects', () => {
    const bindings = desiredRoleBindings('xxl-job', rbac, [sa('a'), sa('a', 'agent'), sa('b')]);
    expect(bindings.map((b) => [b.metadata.namespace, b.subjects.length])).toEqual([
      ['a', 2],
      ['b', 1],
    ]);
    expect(bindings.every((b) => b.kind === 'RoleBinding' && b.roleRef.kind === 'ClusterRole')).toBe(true);
  });
});
