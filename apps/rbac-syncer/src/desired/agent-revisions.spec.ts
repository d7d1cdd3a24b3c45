import { profileHash, referenceProfile } from '@outrigger/agent-profiles';
import { describe, expect, it } from 'vitest';
import { type AgentRevision, parseAgentRevision } from '@outrigger/sidecar';
import { REVISIONS_KEPT, revisionObject, revisionsToPrune } from './agent-revisions.js';

const profile = referenceProfile();

describe('agent revisions', () => {
  it('stores a profile spec and reads it back with the same hash', () => {
    const stored = parseAgentRevision(revisionObject(profile, 3, 'outrigger-system'));
    expect(stored).toEqual({ name: `xxl-job-${profileHash(profile)}`, profile, hash: profileHash(profile), revision: 3 });
  });

  it('ignores a revision edited by hand (its spec no longer hashes to its name) or labelled for another profile', () => {
    const edited = revisionObject(profile, 1, 'ns') as { data: { spec: typeof profile } };
    edited.data.spec = { ...profile, container: { ...profile.container, image: 'docker.io/mallory/shell:1' } };
    expect(parseAgentRevision(edited as never)).toBeUndefined();
    const other = revisionObject(profile, 1, 'ns');
    (other.metadata as { labels: Record<string, string> }).labels['outrigger.dev/profile'] = 'another';
    expect(parseAgentRevision(other)).toBeUndefined();
    expect(parseAgentRevision({ apiVersion: 'apps/v1', kind: 'ControllerRevision', metadata: { name: 'x' } })).toBeUndefined();
  });

  it('keeps the one in force and the newest others', () => {
    const revisions: AgentRevision[] = Array.from({ length: REVISIONS_KEPT + 3 }, (_, i) => ({ name: `r${i}`, profile, hash: `h${i}`, revision: i }));
    const pruned = revisionsToPrune(revisions, new Set(['h0']));
    expect(pruned.map((r) => r.revision)).toEqual([2, 1]);
  });
});
