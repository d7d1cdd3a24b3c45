import { describe, expect, it } from 'vitest';
import { agentProfileSchema } from './profile-schema.js';
import { profileAppliesIn } from './profile-scope.js';
import { referenceProfile } from './reference-profile.js';

const reference = referenceProfile();
const scoped = agentProfileSchema.parse({ ...reference, namespaceSelector: { matchLabels: { team: 'jobs' } } });

describe('profileAppliesIn', () => {
  it('applies a profile without a selector in every namespace labelled for injection, even with unknown labels', () => {
    expect(profileAppliesIn(reference, { team: 'web' })).toBe(true);
    expect(profileAppliesIn(reference, undefined)).toBe(true);
  });

  it('applies a scoped profile only where its selector picks the labels, and nowhere while they are unknown', () => {
    expect(profileAppliesIn(scoped, { team: 'jobs' })).toBe(true);
    expect(profileAppliesIn(scoped, { team: 'web' })).toBe(false);
    expect(profileAppliesIn(scoped, undefined)).toBe(false);
  });

  it('refuses a malformed selector, naming the field', () => {
    const bad = agentProfileSchema.safeParse({ ...reference, namespaceSelector: { matchExpressions: [{ key: 'team', operator: 'In' }] } });
    expect(bad.error?.issues.map((i) => `${i.path.join('.')}: ${i.message}`)).toEqual(['namespaceSelector.matchExpressions.0: values must be non-empty for In and NotIn, and empty for Exists and DoesNotExist']);
  });
});
