import { X509Certificate } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { resolveRotationConfig } from './rotation-config.js';
import { planRotation } from './rotation-planner.js';

// Found by the rotation e2e: a CA named `…@<seconds>` was written as a PrintableString (which has
// no "@"), and kube-apiserver refused the whole caBundle: "x509: invalid RDNSequence".
describe('CA names', () => {
  it('names each CA generation with PrintableString characters only', () => {
    const config = resolveRotationConfig({ serviceName: 'injector', namespace: 'outrigger-system' });
    const plan = planRotation({ now: new Date('2026-01-01T00:00:00Z'), config, webhooks: [] });
    const ca = new X509Certificate(plan.desired.caSecret.data['ca.crt'] ?? '');
    expect(ca.subject).toBe(`CN=outrigger-webhook-ca-${Date.parse('2026-01-01T00:00:00Z') / 1000}`);
  });

  it('rejects a configured CA name Go would not parse', () => {
    expect(() => resolveRotationConfig({ serviceName: 'injector', namespace: 'outrigger-system', caCommonName: 'ca@home' })).toThrow(/PrintableString/);
  });
});
