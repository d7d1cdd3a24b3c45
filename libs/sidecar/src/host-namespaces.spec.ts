import { describe, expect, it } from 'vitest';
import { referenceProfile } from '@outrigger/agent-profiles';
import { hostNamespaceProblem } from './host-namespaces.js';

const profile = referenceProfile();

describe('hostNamespaceProblem', () => {
  it('names the pod field and the profile field', () => {
    expect(hostNamespaceProblem({ hostNetwork: true }, profile)).toBe(
      "the pod sets spec.hostNetwork: true and the agent's port would be open on the node's network; profile xxl-job does not set spec.dangerouslyAllowHostNamespaces: true (remove spec.hostNetwork or the opt-in)",
    );
    expect(hostNamespaceProblem({ hostPID: true }, profile)).toContain('spec.hostPID: true');
    expect(hostNamespaceProblem({ hostIPC: true }, profile)).toContain('spec.hostIPC: true');
  });

  it('is undefined for a pod on its own namespaces, or when the profile allows the node\'s', () => {
    expect(hostNamespaceProblem({ hostNetwork: false, hostPID: 'true' }, profile)).toBeUndefined();
    expect(hostNamespaceProblem({ hostNetwork: true }, { ...profile, dangerouslyAllowHostNamespaces: true })).toBeUndefined();
  });
});
