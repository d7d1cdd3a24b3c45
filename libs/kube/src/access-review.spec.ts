import { describe, expect, it } from 'vitest';
import { describePermission } from './access-review.js';

describe('describePermission', () => {
  it('names the resource with its group, like kubectl auth can-i', () => {
    expect(describePermission({ verb: 'create', group: 'rbac.authorization.k8s.io', resource: 'clusterrolebindings' })).toBe(
      'create clusterrolebindings.rbac.authorization.k8s.io',
    );
  });

  it('leaves the core group out and adds subresource, namespace and name', () => {
    expect(describePermission({ verb: 'list', group: '', resource: 'pods' })).toBe('list pods');
    expect(describePermission({ verb: 'get', group: '', resource: 'pods', subresource: 'log', namespace: 'x', name: 'y' })).toBe(
      'get pods/log in namespace x named y',
    );
  });
});
