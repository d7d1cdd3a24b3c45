import { describe, expect, it } from 'vitest';
import { INJECT_ANNOTATION, INJECTION_LABEL_KEY, INJECTION_LABEL_VALUE, protectedNamespacesFor, SYSTEM_NAMESPACES } from './constants.js';

describe('constants', () => {
  it('names the namespace label and the inject annotation', () => {
    expect(`${INJECTION_LABEL_KEY}=${INJECTION_LABEL_VALUE}`).toBe('outrigger.dev/injection=enabled');
    expect(INJECT_ANNOTATION).toBe('outrigger.dev/inject');
  });

  it('protects the system namespaces and the install namespace', () => {
    expect(protectedNamespacesFor('outrigger-system')).toEqual([...SYSTEM_NAMESPACES, 'outrigger-system']);
    expect(protectedNamespacesFor('kube-system')).toEqual(['kube-system', 'kube-public', 'kube-node-lease']);
  });
});
