/** The lease fields the election reads. */
export interface LeaseRecord {
  readonly holderIdentity?: string;
  readonly leaseDurationSeconds?: number;
}

export type LeaseDecision = 'take' | 'renew' | 'wait';

/**
 * May `identity` write itself into the lease? `renew` if it holds it; `take` if nobody does or
 * the holder let it expire; `wait` otherwise. Expiry is judged by when *we* saw the record last
 * change (`observedAtMs`, our clock), never by the holder's renewTime, so clock skew between
 * nodes cannot make two leaders (the same rule as client-go).
 */
export function leaseDecision(record: LeaseRecord, identity: string, observedAtMs: number, nowMs: number): LeaseDecision {
  const holder = record.holderIdentity;
  if (holder === identity) return 'renew';
  if (!holder) return 'take';
  const durationMs = (record.leaseDurationSeconds ?? 0) * 1_000;
  return nowMs >= observedAtMs + durationMs ? 'take' : 'wait';
}
