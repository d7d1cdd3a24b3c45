import { describe, expect, it } from 'vitest';
import * as admission from './index.js';

describe('public API', () => {
  it('exports the admission core the services build on', () => {
    const names = [
      'parseJsonBody',
      'parseAdmissionReview',
      'allowedResponse',
      'deniedResponse',
      'reviewResponse',
      'mutatePod',
      'computePatch',
      'assertOwnedOps',
      'buildMutatingWebhookConfiguration',
      'protectedNamespacesFor',
    ] as const;
    for (const name of names) expect(typeof admission[name]).toBe('function');
    expect(admission.SYSTEM_NAMESPACES).toEqual(['kube-system', 'kube-public', 'kube-node-lease']);
    expect(admission.INJECTION_LABEL_KEY).toBe('outrigger.dev/injection');
  });
});
