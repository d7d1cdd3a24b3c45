import { describe, expect, it } from 'vitest';
import { AUDIT_DECISION_KEY, deniedDecision, isValidAuditKey, skippedDecision } from './audit.js';

describe('audit annotations', () => {
  it('uses a key kube-apiserver accepts after prefixing the webhook name', () => {
    expect(isValidAuditKey(AUDIT_DECISION_KEY)).toBe(true);
  });

  it.each(['outrigger.dev/decision', '', '-decision', 'decision-', 'x'.repeat(64), 'with space'])('rejects %j', (key) => {
    expect(isValidAuditKey(key)).toBe(false);
  });

  it.each(['decision', 'a', 'profile_hash', 'x.y-z', 'x'.repeat(63)])('accepts %j', (key) => {
    expect(isValidAuditKey(key)).toBe(true);
  });

  it('spells decisions as skipped:<reason> and denied:<reason>', () => {
    expect(skippedDecision('not-opted-in')).toBe('skipped:not-opted-in');
    expect(deniedDecision('missing-parameter')).toBe('denied:missing-parameter');
  });
});
