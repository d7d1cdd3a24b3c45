import * as admission from '@outrigger/admission';
import { referenceProfile } from '@outrigger/agent-profiles';
import { describe, expect, it } from 'vitest';
import { sidecarExtension, statusValue } from './index.js';
import { loadTextFixture } from './testing/fixtures.js';

describe('the admission libraries together', () => {
  it('takes a raw request body to a reply, as the webhook app will', () => {
    const body = admission.parseJsonBody(Buffer.from(loadTextFixture('reviews/v1-pod-opted-in.json')));
    if (!body.ok) throw new Error(body.error);
    const review = admission.parseAdmissionReview(body.value);
    if (!review.ok) throw new Error(review.error);
    const reference = referenceProfile();
    const profiles = { value: [reference] };
    const extension = sidecarExtension({
      profiles: profiles.value,
      injectorVersion: '1.2.3',
      protectedNamespaces: admission.protectedNamespacesFor('outrigger-system'),
    });
    const outcome = admission.reviewResponse(review.value, [extension]);
    const wire = JSON.parse(JSON.stringify(outcome.reply)) as typeof outcome.reply;
    expect(wire.response.uid).toBe(review.value.request.uid);
    expect(wire.response.auditAnnotations).toEqual({ [admission.AUDIT_DECISION_KEY]: admission.DECISION_INJECTED });
    const patched = admission.applyPatchCopy(review.value.request.object ?? {}, admission.decodePatch(wire.response.patch ?? ''));
    expect(patched['metadata']).toMatchObject({ annotations: { 'xxl-agent/status': statusValue(reference, '1.2.3', true, { volumes: (reference.volumes ?? []).map((v) => v.name), imagePullSecrets: [] }) } });
  });

});
