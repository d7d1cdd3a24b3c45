import { describe, expect, it } from 'vitest';
import { authorizedToGuardMs, SYNCED_RBAC_TYPES } from './synced-rbac.js';

const rule = (operations: string[], resources: string[], apiGroups = ['']) => ({ operations, apiGroups, resources });

describe('authorizedToGuardMs', () => {
  it('is the margin alone when no mutating webhook can see an exec', () => {
    const podCreate = { timeoutSeconds: 30, reinvocationPolicy: 'IfNeeded', rules: [rule(['CREATE'], ['pods'])] };
    const deployments = { timeoutSeconds: 30, rules: [rule(['*'], ['deployments'], ['apps'])] };
    expect(authorizedToGuardMs([podCreate, deployments, {}])).toBe(5_000);
  });

  it('adds the timeout of every webhook that may see an exec, attach or port-forward, twice when it may be reinvoked', () => {
    const exec = { timeoutSeconds: 3, rules: [rule(['CONNECT'], ['pods/exec'])] };
    const everything = { reinvocationPolicy: 'IfNeeded', rules: [rule(['*'], ['*'], ['*'])] };
    const portForward = { timeoutSeconds: 7, rules: [rule(['CREATE', 'CONNECT'], ['pods/*'])] };
    expect(authorizedToGuardMs([exec, everything, portForward])).toBe(5_000 + 3_000 + 2 * 10_000 + 7_000);
  });

  it('removes the roles before the bindings, the exec guard\'s parameters', () => {
    expect(SYNCED_RBAC_TYPES.map((t) => t.kind)).toEqual(['ClusterRole', 'ClusterRoleBinding', 'RoleBinding']);
  });
});
