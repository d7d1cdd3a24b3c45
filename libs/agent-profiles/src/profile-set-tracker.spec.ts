import { describe, expect, it } from 'vitest';
import { err, ok } from '@outrigger/admission';
import type { AgentProfileEntry } from './agent-profile-object.js';
import { describeVerdict, ProfileSetTracker } from './profile-set-tracker.js';
import { referenceProfile } from './reference-profile.js';

const XXL = referenceProfile();
const OTHER = { ...XXL, name: 'other', annotationPrefix: 'other.example.com/', container: { ...XXL.container, name: 'other-agent' }, rbac: undefined };

function entry(name: string, generation: number, profile: AgentProfileEntry['profile']): AgentProfileEntry {
  return { name, generation, createdAt: '2026-01-01T00:00:00Z', profile };
}

describe('ProfileSetTracker', () => {
  it('reports the first resolution as a change, even when nothing is listed', () => {
    const change = new ProfileSetTracker().update([]);
    expect(change).toEqual({ inForce: [], changed: true, newVerdicts: [] });
  });

  it('reports each verdict once, and a change only when the profiles in force differ by name or content', () => {
    const tracker = new ProfileSetTracker();
    const first = tracker.update([entry('xxl-job', 1, ok(XXL)), entry('other', 1, ok(OTHER))]);
    expect(first.changed).toBe(true);
    expect(first.newVerdicts.map(describeVerdict)).toEqual(['AgentProfile other generation 1: generation 1 is in force', 'AgentProfile xxl-job generation 1: generation 1 is in force']);

    // The same objects again (e.g. after a status write): nothing new.
    expect(tracker.update([entry('other', 1, ok(OTHER)), entry('xxl-job', 1, ok(XXL))])).toMatchObject({ changed: false, newVerdicts: [] });

    // A refused edit: a new verdict, the last good generation stays, no change in force.
    const refused = tracker.update([entry('xxl-job', 2, err('spec.container.image: is required')), entry('other', 1, ok(OTHER))]);
    expect(refused.changed).toBe(false);
    expect(refused.newVerdicts).toMatchObject([{ name: 'xxl-job', generation: 2, accepted: false, inForceGeneration: 1 }]);
    expect(tracker.verdict('xxl-job')).toMatchObject({ reason: 'Invalid' });

    // A real edit and a deletion are changes.
    const edited = tracker.update([entry('xxl-job', 3, ok({ ...XXL, nativeSidecar: true }))]);
    expect(edited.changed).toBe(true);
    expect(edited.inForce).toEqual([{ profile: { ...XXL, nativeSidecar: true }, generation: 3 }]);
    expect(tracker.names()).toEqual(['xxl-job']);
  });
});
