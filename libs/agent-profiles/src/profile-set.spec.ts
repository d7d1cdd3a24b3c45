import { describe, expect, it } from 'vitest';
import { err, ok } from '@outrigger/admission';
import type { AgentProfileEntry } from './agent-profile-object.js';
import { resolveProfiles, type ProfileInForce } from './profile-set.js';
import { referenceProfile } from './reference-profile.js';

const XXL = referenceProfile();
const OTHER = { ...XXL, name: 'other', annotationPrefix: 'other.example.com/', container: { ...XXL.container, name: 'other-agent' }, rbac: undefined };

function entry(name: string, generation: number, profile: AgentProfileEntry['profile'], createdAt = '2026-01-01T00:00:00Z'): AgentProfileEntry {
  return { name, generation, createdAt, profile };
}

describe('resolveProfiles', () => {
  it('puts every valid profile in force, with its generation', () => {
    const set = resolveProfiles([entry('xxl-job', 3, ok(XXL)), entry('other', 1, ok(OTHER))], []);
    // Same age: ordered by name.
    expect(set.inForce).toEqual([{ profile: OTHER, generation: 1 }, { profile: XXL, generation: 3 }]);
    expect(set.verdicts.map((v) => [v.name, v.accepted, v.reason, v.inForceGeneration])).toEqual([
      ['other', true, 'Valid', 1],
      ['xxl-job', true, 'Valid', 3],
    ]);
  });

  it('keeps the last good generation of a profile whose new generation is invalid, and says so', () => {
    const previous: ProfileInForce[] = [{ profile: XXL, generation: 3 }];
    const set = resolveProfiles([entry('xxl-job', 4, err('spec.container.image: is required'))], previous);
    expect(set.inForce).toEqual(previous);
    expect(set.verdicts).toEqual([
      {
        name: 'xxl-job',
        generation: 4,
        accepted: false,
        reason: 'Invalid',
        message: 'spec.container.image: is required (generation 3 stays in force)',
        inForceGeneration: 3,
      },
    ]);
  });

  it('has nothing in force for an invalid profile never seen valid', () => {
    const set = resolveProfiles([entry('xxl-job', 1, err('spec: is required'))], []);
    expect(set.inForce).toEqual([]);
    expect(set.verdicts[0]?.message).toBe('spec: is required (no generation of it is in force)');
  });

  it('drops a deleted profile', () => {
    expect(resolveProfiles([], [{ profile: XXL, generation: 3 }]).inForce).toEqual([]);
  });

  it('lets the older of two profiles claiming the same annotation prefix win, whatever the order', () => {
    const clash = { ...OTHER, annotationPrefix: XXL.annotationPrefix };
    const entries = [entry('other', 1, ok(clash), '2026-01-02T00:00:00Z'), entry('xxl-job', 1, ok(XXL), '2026-01-01T00:00:00Z')];
    for (const order of [entries, [...entries].reverse()]) {
      const set = resolveProfiles(order, []);
      expect(set.inForce.map((p) => p.profile.name)).toEqual(['xxl-job']);
      expect(set.verdicts.find((v) => v.name === 'other')).toMatchObject({
        accepted: false,
        reason: 'Conflict',
        message: 'spec.annotationPrefix "xxl-agent/" is already used by AgentProfile xxl-job; the older profile wins and this one is not in force',
      });
    }
  });
});
