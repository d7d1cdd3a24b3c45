import { describe, expect, it } from 'vitest';
import { leaseDecision } from './lease-decision.js';

describe('leaseDecision', () => {
  it('renews its own lease', () => {
    expect(leaseDecision({ holderIdentity: 'me', leaseDurationSeconds: 15 }, 'me', 0, 1)).toBe('renew');
  });

  it('takes a lease nobody holds (never held, or released)', () => {
    expect(leaseDecision({}, 'me', 0, 0)).toBe('take');
    expect(leaseDecision({ holderIdentity: '', leaseDurationSeconds: 1 }, 'me', 0, 0)).toBe('take');
  });

  it('waits while another holder is within its lease, measured from when we observed it', () => {
    const record = { holderIdentity: 'other', leaseDurationSeconds: 15 };
    expect(leaseDecision(record, 'me', 10_000, 24_999)).toBe('wait');
    expect(leaseDecision(record, 'me', 10_000, 25_000)).toBe('take');
  });
});
