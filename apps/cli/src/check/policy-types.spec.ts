import { certManagerConfinementPolicy, execGuardPolicy, forgedAgentPolicy, optInMissingPolicy, syncerConfinementPolicy } from '@outrigger/install';
import { describe, expect, it } from 'vitest';
import { policyTypesView } from './policy-types.js';

const typedAt = (policy: object, generation: number, observedGeneration: number, expressionWarnings?: object[]) => ({
  ...policy,
  metadata: { name: 'p', generation },
  status: { observedGeneration, typeChecking: expressionWarnings ? { expressionWarnings } : {} },
});

describe('policyTypesView', () => {
  it.each<[string, object, boolean]>([
    ['the exec guard (pods/exec, a subresource)', execGuardPolicy('ClusterRoleBinding'), false],
    ['the namespaced exec guard', execGuardPolicy('RoleBinding'), false],
    ["the rbac-syncer's confinement (every version)", syncerConfinementPolicy(), false],
    ["the cert-manager's confinement (every version)", certManagerConfinementPolicy(), false],
    ['the forged-agent policy (pods v1)', forgedAgentPolicy(), true],
    ['the opt-in-missing policy (workloads in apps/v1 and batch/v1)', optInMissingPolicy(), true],
  ])('%s: Kubernetes types it: %s', (_what, policy, typed) => {
    expect(policyTypesView('p', 'f.yaml', typedAt(policy, 1, 1))).toEqual({ name: 'p', file: 'f.yaml', typed, warnings: [] });
  });

  it('reads the warnings of the current generation only; none is read before Kubernetes has typed it', () => {
    const warning = { fieldRef: 'spec.validations[0].expression', warning: "ERROR: undefined field 'x'" };
    expect(policyTypesView('p', 'f.yaml', typedAt(forgedAgentPolicy(), 2, 2, [warning]))?.warnings).toEqual([warning]);
    expect(policyTypesView('p', 'f.yaml', typedAt(forgedAgentPolicy(), 3, 2, [warning]))?.warnings).toBeUndefined();
    expect(policyTypesView('p', 'f.yaml', { ...forgedAgentPolicy(), metadata: { generation: 1 } })?.warnings).toBeUndefined();
    expect(policyTypesView('p', 'f.yaml', undefined)).toBeUndefined();
  });

  it('reads a checked generation without typeChecking, as Kubernetes leaves it once the last warning is gone, as no warning', () => {
    expect(policyTypesView('p', 'f.yaml', { ...forgedAgentPolicy(), metadata: { generation: 3 }, status: { observedGeneration: 3 } })?.warnings).toEqual([]);
  });
});
