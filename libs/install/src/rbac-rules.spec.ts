import { describe, expect, it } from 'vitest';
import { rbacRules } from './rbac-rules.js';

describe('rbacRules', () => {
  it('one rule per resource and name, each verb once, subresources as resource/subresource', () => {
    expect(
      rbacRules([
        { verb: 'get', group: 'apps', resource: 'deployments', name: 'a' },
        { verb: 'get', group: 'apps', resource: 'deployments', name: 'a' },
        { verb: 'patch', group: 'apps', resource: 'deployments', subresource: 'scale', name: 'a' },
        { verb: 'get', group: 'apps', resource: 'deployments', name: 'b' },
        { verb: 'list', group: '', resource: 'pods' },
        { verb: 'watch', group: '', resource: 'pods' },
      ]),
    ).toEqual([
      { apiGroups: ['apps'], resources: ['deployments'], verbs: ['get'], resourceNames: ['a'] },
      { apiGroups: ['apps'], resources: ['deployments/scale'], verbs: ['patch'], resourceNames: ['a'] },
      { apiGroups: ['apps'], resources: ['deployments'], verbs: ['get'], resourceNames: ['b'] },
      { apiGroups: [''], resources: ['pods'], verbs: ['list', 'watch'] },
    ]);
  });
});
