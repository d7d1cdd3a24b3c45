import { describe, expect, it } from 'vitest';
import type { AdmissionReview } from './admission-types.js';
import { decodePatch } from './patch.js';
import { allowedResponse, deniedResponse, MAX_WARNING_LENGTH, statusReasonFor } from './admission-responses.js';
import { loadReview } from './testing/fixtures.js';

const v1 = loadReview('v1-pod-opted-in');
const v1beta1 = loadReview('v1beta1-pod-opted-in');

describe.each<[string, AdmissionReview]>([
  ['admission.k8s.io/v1', v1],
  ['admission.k8s.io/v1beta1', v1beta1],
])('replies to %s', (apiVersion, review) => {
  it('allows in the same apiVersion with the same uid', () => {
    expect(allowedResponse(review)).toEqual({
      apiVersion,
      kind: 'AdmissionReview',
      response: { uid: review.request.uid, allowed: true },
    });
  });

  it('denies in the same apiVersion with the same uid and a status', () => {
    expect(deniedResponse(review, { code: 422, message: 'annotation xxl-agent/job-addr is required' })).toEqual({
      apiVersion,
      kind: 'AdmissionReview',
      response: {
        uid: review.request.uid,
        allowed: false,
        status: { code: 422, message: 'annotation xxl-agent/job-addr is required', reason: 'Invalid' },
      },
    });
  });
});

describe('allowedResponse', () => {
  it('sends a non-empty patch as base64 JSONPatch', () => {
    const patch = [{ op: 'add' as const, path: '/metadata/annotations/xxl-agent~1status', value: '{}' }];
    const { response } = allowedResponse(v1, { patch });
    expect(response.patchType).toBe('JSONPatch');
    expect(decodePatch(response.patch ?? '')).toEqual(patch);
  });

  it('sends no patch fields for an empty patch', () => {
    const { response } = allowedResponse(v1, { patch: [] });
    expect(response).not.toHaveProperty('patch');
    expect(response).not.toHaveProperty('patchType');
  });

  it('carries warnings (de-duplicated, cut to the API server limit) and audit annotations', () => {
    const long = 'w'.repeat(1000);
    const { response } = allowedResponse(v1, {
      warnings: ['a', 'a', long],
      auditAnnotations: { decision: 'injected' },
    });
    expect(response.warnings).toEqual(['a', `${'w'.repeat(MAX_WARNING_LENGTH - 1)}…`]);
    expect(response.auditAnnotations).toEqual({ decision: 'injected' });
  });

  it('refuses audit keys kube-apiserver would reject', () => {
    expect(() => allowedResponse(v1, { auditAnnotations: { 'outrigger.dev/decision': 'x' } })).toThrow(RangeError);
    expect(() => allowedResponse(v1, { auditAnnotations: { '': 'x' } })).toThrow(RangeError);
  });
});

describe('deniedResponse', () => {
  it('keeps an explicit reason and carries warnings', () => {
    const { response } = deniedResponse(v1, { code: 403, message: 'no', reason: 'Forbidden', warnings: ['w'] });
    expect(response.status).toEqual({ code: 403, message: 'no', reason: 'Forbidden' });
    expect(response.warnings).toEqual(['w']);
  });

  it('refuses a code that is not an HTTP error', () => {
    expect(() => deniedResponse(v1, { code: 200, message: 'x' })).toThrow(RangeError);
  });
});

describe('statusReasonFor', () => {
  it.each([
    [400, 'BadRequest'],
    [403, 'Forbidden'],
    [422, 'Invalid'],
    [500, 'InternalError'],
    [418, 'BadRequest'],
    [599, 'InternalError'],
  ])('maps %i to %s', (code, reason) => {
    expect(statusReasonFor(code)).toBe(reason);
  });
});
