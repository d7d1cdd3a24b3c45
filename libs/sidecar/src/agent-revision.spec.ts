import { profileHash, referenceProfile } from '@outrigger/agent-profiles';
import { describe, expect, it } from 'vitest';
import { parseAgentRevision, podCreatedMs, REPLACED_AT_ANNOTATION, revisionObject, specsWhenCreated } from './agent-revision.js';

const profile = referenceProfile();

describe('agent revisions', () => {
  it('stores a profile spec and reads it back with the same hash, and when another took its place', () => {
    const stored = parseAgentRevision(revisionObject(profile, 3, 'outrigger-system'));
    expect(stored).toEqual({ name: `xxl-job-${profileHash(profile)}`, profile, hash: profileHash(profile), revision: 3 });
    const replaced = revisionObject(profile, 3, 'outrigger-system');
    const marked = { ...replaced, metadata: { ...replaced.metadata, annotations: { [REPLACED_AT_ANNOTATION]: '2026-03-01T12:00:00Z' } } };
    expect(parseAgentRevision(marked)?.replacedAt).toBe(Date.parse('2026-03-01T12:00:00Z'));
    const unreadable = { ...replaced, metadata: { ...replaced.metadata, annotations: { [REPLACED_AT_ANNOTATION]: 'yesterday' } } };
    expect(parseAgentRevision(unreadable)).not.toHaveProperty('replacedAt');
  });

  it('ignores a revision edited by hand (its spec no longer hashes to its name) or labelled for another profile', () => {
    const edited = revisionObject(profile, 1, 'ns');
    expect(parseAgentRevision({ ...edited, data: { spec: { ...profile, container: { ...profile.container, image: 'docker.io/mallory/shell:1' } } } })).toBeUndefined();
    const other = revisionObject(profile, 1, 'ns');
    expect(parseAgentRevision({ ...other, metadata: { ...other.metadata, labels: { ...other.metadata.labels, 'outrigger.dev/profile': 'another' } } })).toBeUndefined();
    expect(parseAgentRevision({ apiVersion: 'apps/v1', kind: 'ControllerRevision', metadata: { name: 'x' } })).toBeUndefined();
  });
});

describe('specsWhenCreated', () => {
  const hash = profileHash(profile);
  const replacedAt = Date.parse('2026-03-01T12:00:00Z');
  const stored = (marked: boolean) => (name: string, h: string) => (name === 'xxl-job' && h === hash ? { name: `xxl-job-${hash}`, profile, hash, revision: 1, ...(marked ? { replacedAt } : {}) } : undefined);

  it('gives an earlier spec to pods created while it was in force or within the lag after, never later', () => {
    const lookup = (created: string) => specsWhenCreated(stored(true), Date.parse(created), 60_000)('xxl-job', hash);
    expect(lookup('2026-03-01T11:00:00Z')).toBe(profile);
    expect(lookup('2026-03-01T12:01:00Z')).toBe(profile);
    expect(lookup('2026-03-01T12:01:01Z')).toBeUndefined();
    expect(specsWhenCreated(stored(true), Number.NaN, 60_000)('xxl-job', hash)).toBeUndefined();
  });

  it('gives a spec not marked as replaced to every pod, and nothing it does not keep', () => {
    expect(specsWhenCreated(stored(false), Date.parse('2030-01-01T00:00:00Z'), 0)('xxl-job', hash)).toBe(profile);
    expect(specsWhenCreated(stored(true), replacedAt, 0)('xxl-job', 'f'.repeat(hash.length))).toBeUndefined();
    expect(specsWhenCreated(stored(true), replacedAt, 0)('other', hash)).toBeUndefined();
  });

  it('reads a pod\'s creation time as the API server wrote it, NaN otherwise', () => {
    expect(podCreatedMs({ metadata: { creationTimestamp: '2026-03-01T12:00:00Z' } })).toBe(replacedAt);
    expect(podCreatedMs({ metadata: {} })).toBeNaN();
    expect(podCreatedMs({ metadata: { creationTimestamp: 'soon' } })).toBeNaN();
    expect(podCreatedMs({})).toBeNaN();
  });
});
