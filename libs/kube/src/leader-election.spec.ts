import { describe, expect, it } from 'vitest';
import { identityPod, LeaderElector } from './leader-election.js';
import type { KubeClient } from './kube-request.js';

describe('identityPod', () => {
  it('gives back the pod of the identity an elector forms', () => {
    process.env.POD_NAME = 'outrigger-rbac-syncer-7df75d9b75-5pwrz';
    const elector = new LeaderElector({} as KubeClient, { namespace: 'ns', name: 'lease' });
    expect(identityPod(elector.identity)).toBe('outrigger-rbac-syncer-7df75d9b75-5pwrz');
    delete process.env.POD_NAME;
  });

  it('leaves an identity without the suffix as it is', () => {
    expect(identityPod('syncer')).toBe('syncer');
  });
});
