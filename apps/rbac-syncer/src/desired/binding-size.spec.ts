import { referenceProfile } from '@outrigger/agent-profiles';
import { describe, expect, it } from 'vitest';
import { MAX_SUBJECTS_CEILING } from '../config/rbac-syncer.config.js';
import { bindingIn } from './rbac-objects.js';

// etcd refuses a request over 1.5 MiB by default (--max-request-bytes); the API server stores the object as protobuf, smaller than JSON.
const ETCD_REQUEST_LIMIT = 1.5 * 1024 * 1024;

describe('one namespace binding at the cap', () => {
  it('fits etcd even with the longest names Kubernetes allows', () => {
    const rbac = referenceProfile().rbac;
    if (!rbac) throw new Error('the reference profile binds RBAC');
    const namespace = 'n'.repeat(63);
    const subjects = Array.from({ length: MAX_SUBJECTS_CEILING }, (_, i) => ({ kind: 'ServiceAccount' as const, namespace, name: `${i}-${'s'.repeat(253 - String(i).length - 1)}` }));
    const binding = bindingIn('xxl-job', { ...rbac, binding: { kind: 'ClusterRoleBinding', name: 'b'.repeat(189) } }, namespace, subjects);
    expect(Buffer.byteLength(JSON.stringify(binding))).toBeLessThan(ETCD_REQUEST_LIMIT);
  });
});
