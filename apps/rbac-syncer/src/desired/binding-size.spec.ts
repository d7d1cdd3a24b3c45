import { referenceProfile } from '@outrigger/agent-profiles';
import { describe, expect, it } from 'vitest';
import { MAX_SUBJECTS_CEILING } from '../config/rbac-syncer.config.js';
import { listedChars, REVOKED_LIST_MAX_CHARS } from '../plan/plan-profile.js';
import { bindingIn } from './rbac-objects.js';
import type { RevokedSubject } from './subjects.js';

// etcd refuses a request over 1.5 MiB by default (--max-request-bytes); the API server stores the object as protobuf, smaller than JSON.
const ETCD_REQUEST_LIMIT = 1.5 * 1024 * 1024;

describe('one namespace binding at the cap', () => {
  it('fits etcd even with the longest names Kubernetes allows and a full revoked list', () => {
    const rbac = referenceProfile().rbac;
    if (!rbac) throw new Error('the reference profile binds RBAC');
    const namespace = 'n'.repeat(63);
    const subjects = Array.from({ length: MAX_SUBJECTS_CEILING }, (_, i) => ({ kind: 'ServiceAccount' as const, namespace, name: `${i}-${'s'.repeat(253 - String(i).length - 1)}` }));
    // Its revoked list as full as the syncer lets it grow (REVOKED_LIST_MAX_CHARS), of the longest names too.
    const untilMs = Date.parse('2286-11-20T17:46:39Z');
    const revoked: RevokedSubject[] = [];
    for (let i = 0, room = REVOKED_LIST_MAX_CHARS; ; i++) {
      const entry = { kind: 'ServiceAccount' as const, namespace, name: `r${i}-${'r'.repeat(253 - String(i).length - 2)}`, untilMs };
      room -= listedChars(entry);
      if (room < 0) break;
      revoked.push(entry);
    }
    const binding = bindingIn('xxl-job', { ...rbac, binding: { kind: 'ClusterRoleBinding', name: 'b'.repeat(189) } }, namespace, subjects, revoked);
    expect(revoked.length).toBeGreaterThan(350);
    expect(Buffer.byteLength(JSON.stringify(binding))).toBeLessThan(ETCD_REQUEST_LIMIT);
  });
});
