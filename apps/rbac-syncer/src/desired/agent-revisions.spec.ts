import { referenceProfile } from '@outrigger/agent-profiles';
import { describe, expect, it } from 'vitest';
import type { AgentRevision } from '@outrigger/sidecar';
import { REVISIONS_KEPT, revisionsToPrune } from './agent-revisions.js';

const profile = referenceProfile();

describe('agent revisions', () => {
  it('keeps the one in force and the newest others', () => {
    const revisions: AgentRevision[] = Array.from({ length: REVISIONS_KEPT + 3 }, (_, i) => ({ name: `r${i}`, profile, hash: `h${i}`, revision: i }));
    const pruned = revisionsToPrune(revisions, new Set(['h0']));
    expect(pruned.map((r) => r.revision)).toEqual([2, 1]);
  });
});
