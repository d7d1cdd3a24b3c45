import { referenceProfile } from '@outrigger/agent-profiles';
import { describe, expect, it } from 'vitest';
import { certManagerPermissions, injectorPermissions, rbacSyncerBasePermissions, rbacSyncerPermissions } from './service-permissions.js';

const XXL_JOB_PROFILE = referenceProfile();

describe('rbacSyncerPermissions', () => {
  it('asks for bind and escalate only on the profile ClusterRole, and its Lease by name', () => {
    const list = rbacSyncerPermissions([XXL_JOB_PROFILE], { namespace: 'outrigger-system', name: 'lease' }, 'guard');
    const bind = list.filter((p) => p.verb === 'bind' || p.verb === 'escalate');
    expect(bind.map((p) => p.name)).toEqual(['xxl-agent-exec', 'xxl-agent-exec']);
    expect(list).toContainEqual({ verb: 'update', group: 'coordination.k8s.io', resource: 'leases', namespace: 'outrigger-system', name: 'lease' });
    expect(list.some((p) => p.resource === 'rolebindings')).toBe(false);
  });

  it('reads the exec guard, by name and never writes it, when a profile binds cluster-wide', () => {
    const list = rbacSyncerPermissions([XXL_JOB_PROFILE], { namespace: 'n', name: 'l' }, 'guard').filter((p) => p.group === 'admissionregistration.k8s.io');
    expect(list.map((p) => `${p.verb} ${p.resource}/${p.name}`)).toEqual([
      'get validatingadmissionpolicies/guard',
      'list validatingadmissionpolicies/guard',
      'watch validatingadmissionpolicies/guard',
      'get validatingadmissionpolicybindings/guard',
      'list validatingadmissionpolicybindings/guard',
      'watch validatingadmissionpolicybindings/guard',
    ]);
  });

  it('adds RoleBinding permissions only for profiles that ask for RoleBindings, and reads the guard of RoleBinding-bound agents instead', () => {
    const profile = { ...XXL_JOB_PROFILE, rbac: { clusterRole: 'xxl-agent-exec', rules: XXL_JOB_PROFILE.rbac?.rules ?? [], binding: { kind: 'RoleBinding' as const, name: 'x' } } };
    const list = rbacSyncerPermissions([profile], { namespace: 'n', name: 'l' }, 'guard');
    expect(list.some((p) => p.resource === 'rolebindings')).toBe(true);
    const guard = list.filter((p) => p.group === 'admissionregistration.k8s.io');
    expect(new Set(guard.map((p) => p.name))).toEqual(new Set(['guard-namespaced']));
    expect(guard.map((p) => p.verb).sort()).toEqual(['get', 'get', 'list', 'list', 'watch', 'watch']);
  });
});

describe('rbacSyncerBasePermissions', () => {
  it('lists and watches AgentProfiles and writes only their status, when profiles come from the API', () => {
    const list = rbacSyncerBasePermissions({ namespace: 'n', name: 'l' }, true).filter((p) => p.group === 'outrigger.dev');
    expect(list.map((p) => `${p.verb} ${p.resource}${p.subresource ? `/${p.subresource}` : ''}`)).toEqual(['list agentprofiles', 'watch agentprofiles', 'patch agentprofiles/status']);
    expect(rbacSyncerBasePermissions({ namespace: 'n', name: 'l' }, false).some((p) => p.group === 'outrigger.dev')).toBe(false);
  });
});

describe('injectorPermissions', () => {
  it('reads its serving Secret by name only, and AgentProfiles and namespaces only when they come from the API', () => {
    const list = injectorPermissions({ servingSecret: { namespace: 'outrigger-system', name: 'tls' }, profilesFromApi: true });
    expect(list.map((p) => `${p.verb} ${p.resource}${p.name ? `/${p.name}` : ''}${p.namespace ? ` in ${p.namespace}` : ''}`)).toEqual([
      'get secrets/tls in outrigger-system',
      'list secrets/tls in outrigger-system',
      'watch secrets/tls in outrigger-system',
      'list agentprofiles',
      'watch agentprofiles',
      'list namespaces',
      'watch namespaces',
    ]);
    expect(injectorPermissions({ profilesFromApi: false })).toEqual([]);
  });
});

describe('certManagerPermissions', () => {
  it('writes its Secrets and webhook configurations by name only; creates are unnamed, as RBAC cannot name what does not exist yet, and Events only in its namespace and in default', () => {
    const list = certManagerPermissions({ namespace: 'ns', secrets: ['ca', 'tls'], webhooks: ['hook'], lease: { namespace: 'ns', name: 'lease' } });
    const writes = list.filter((p) => ['update', 'patch'].includes(p.verb));
    expect(writes.map((p) => `${p.verb} ${p.resource}/${p.name}`)).toEqual(['update secrets/ca', 'update secrets/tls', 'patch mutatingwebhookconfigurations/hook', 'update leases/lease']);
    expect(list.filter((p) => p.name === undefined).map((p) => `${p.verb} ${p.resource} in ${p.namespace}`)).toEqual(['create secrets in ns', 'create leases in ns', 'create events in ns', 'create events in default']);
  });
});
