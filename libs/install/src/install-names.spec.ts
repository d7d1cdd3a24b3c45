import { describe, expect, it } from 'vitest';
import { holderVersionAnnotations, holderVersionFrom, LEASE_HOLDER_VERSION_ANNOTATION } from './install-names.js';

describe("a Lease's holder version", () => {
  const holder = 'outrigger-rbac-syncer-6d5f7c9b8-x2x7q_1a2b3c4d';

  it('reads back what the holder stamped', () => {
    expect(holderVersionFrom(holderVersionAnnotations(holder, '0.2.0+3f2a9c1d0b7e'), holder)).toBe('0.2.0+3f2a9c1d0b7e');
  });

  it('is unknown when another identity stamped it: a holder of an earlier version keeps the stamp of the one before', () => {
    expect(holderVersionFrom(holderVersionAnnotations('outrigger-rbac-syncer-old_9f8e7d6c', '0.2.0'), holder)).toBeUndefined();
    expect(holderVersionFrom(holderVersionAnnotations(holder, '0.2.0'), undefined)).toBeUndefined();
  });

  it('is unknown when missing or malformed', () => {
    expect(holderVersionFrom(undefined, holder)).toBeUndefined();
    expect(holderVersionFrom({}, holder)).toBeUndefined();
    for (const stamp of [holder, `${holder} `, `${holder} 0.2.0 extra`, ` ${holder} 0.2.0`, 42]) expect(holderVersionFrom({ [LEASE_HOLDER_VERSION_ANNOTATION]: stamp }, holder)).toBeUndefined();
  });
});
