import { describe, expect, it } from 'vitest';
import { resourcePath } from './api-path.js';
import { objectKey, splitObjectKey } from './kube-object.js';

describe('objectKey', () => {
  it('is namespace/name, or the name for cluster-scoped objects, and splits back', () => {
    expect(objectKey({ metadata: { namespace: 'ns', name: 'a' } })).toBe('ns/a');
    expect(objectKey({ metadata: { name: 'crb' } })).toBe('crb');
    expect(splitObjectKey('ns/a')).toEqual({ namespace: 'ns', name: 'a' });
    expect(splitObjectKey('crb')).toEqual({ name: 'crb' });
  });

  it('refuses objects without a name', () => {
    expect(() => objectKey({ metadata: {} })).toThrow(/metadata.name/);
  });
});

describe('resourcePath', () => {
  it('builds core, grouped, namespaced, cluster-scoped and subresource paths', () => {
    expect(resourcePath({ apiVersion: 'v1', resource: 'pods' })).toBe('/api/v1/pods');
    expect(resourcePath({ apiVersion: 'v1', resource: 'pods', namespace: 'ns', name: 'p', subresource: 'status' })).toBe(
      '/api/v1/namespaces/ns/pods/p/status',
    );
    expect(resourcePath({ apiVersion: 'rbac.authorization.k8s.io/v1', resource: 'clusterrolebindings', name: 'x' })).toBe(
      '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/x',
    );
  });

  it('refuses a subresource without a name', () => {
    expect(() => resourcePath({ apiVersion: 'v1', resource: 'pods', subresource: 'status' })).toThrow();
  });
});
