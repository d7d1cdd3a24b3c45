import { describe, expect, it } from 'vitest';
import { profileHash } from './profile-hash.js';
import { referenceProfile } from './reference-profile.js';

const XXL_JOB_PROFILE = referenceProfile();

describe('profileHash', () => {
  it('is 16 lowercase hex digits', () => {
    expect(profileHash(XXL_JOB_PROFILE)).toMatch(/^[0-9a-f]{16}$/);
  });

  it('does not depend on key order', () => {
    const reversed = (value: unknown): unknown => {
      if (Array.isArray(value)) return value.map(reversed);
      if (typeof value !== 'object' || value === null) return value;
      return Object.fromEntries(Object.entries(value).reverse().map(([key, member]) => [key, reversed(member)]));
    };
    const reordered = reversed(XXL_JOB_PROFILE) as typeof XXL_JOB_PROFILE;
    expect(JSON.stringify(reordered)).not.toBe(JSON.stringify(XXL_JOB_PROFILE));
    expect(profileHash(reordered)).toBe(profileHash(XXL_JOB_PROFILE));
  });

  it('changes with any value', () => {
    const image = { ...XXL_JOB_PROFILE, container: { ...XXL_JOB_PROFILE.container, image: 'ghcr.io/outrigger/xxl-agent:1.0.1' } };
    const native = { ...XXL_JOB_PROFILE, nativeSidecar: true };
    const hashes = new Set([profileHash(XXL_JOB_PROFILE), profileHash(image), profileHash(native)]);
    expect(hashes.size).toBe(3);
  });

  it('is pinned for the reference profile, so an accidental change to it is noticed', () => {
    expect(profileHash(XXL_JOB_PROFILE)).toBe('2b0f2d6027583275');
  });
});
