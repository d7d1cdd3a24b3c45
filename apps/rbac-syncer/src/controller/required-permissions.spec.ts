import { XXL_JOB_PROFILE } from '@outrigger/admission';
import { describe, expect, it } from 'vitest';
import { requiredPermissions } from './required-permissions.js';

describe('requiredPermissions', () => {
  it('asks for bind and escalate only on the profile ClusterRole, and its Lease by name', () => {
    const list = requiredPermissions([XXL_JOB_PROFILE], { namespace: 'outrigger-system', name: 'lease' });
    const bind = list.filter((p) => p.verb === 'bind' || p.verb === 'escalate');
    expect(bind.map((p) => p.name)).toEqual(['xxl-agent-exec', 'xxl-agent-exec']);
    expect(list).toContainEqual({ verb: 'update', group: 'coordination.k8s.io', resource: 'leases', namespace: 'outrigger-system', name: 'lease' });
    expect(list.some((p) => p.resource === 'rolebindings')).toBe(false);
  });

  it('adds RoleBinding permissions only for profiles that ask for RoleBindings', () => {
    const profile = { ...XXL_JOB_PROFILE, rbac: { clusterRole: 'xxl-agent-exec', rules: XXL_JOB_PROFILE.rbac?.rules ?? [], binding: { kind: 'RoleBinding' as const, name: 'x' } } };
    expect(requiredPermissions([profile], { namespace: 'n', name: 'l' }).some((p) => p.resource === 'rolebindings')).toBe(true);
  });
});
