import type { AdmissionRequest, AdmissionReview, AdmissionReviewReply } from './admission-types.js';
import { AUDIT_DECISION_KEY, skippedDecision } from './audit.js';
import type { AdmissionContext, Extension } from './extension.js';
import { stringMember, objectMember } from './json-value.js';
import { mutatePod, type MutationFailure, type PodMutation } from './mutate.js';
import { allowedResponse, deniedResponse } from './admission-responses.js';

export const NOT_POD_CREATE_REASON = 'not-pod-create';

/** What happened to the pod, for metrics and logs (the audit `decision` string says it for people). */
export type ReviewResult = 'mutated' | 'skipped' | 'denied' | 'failed';

export interface ReviewOutcome {
  /** The AdmissionReview to send back, in the request's apiVersion and with its uid. */
  readonly reply: AdmissionReviewReply;
  readonly result: ReviewResult;
  /** The audit decision, also sent as the `decision` audit annotation. */
  readonly decision: string;
  /** Absent when the request was not a pod CREATE. */
  readonly mutation?: PodMutation;
  /** An unexpected error, turned into an unchanged admission or (a claimed pod) a refusal; log it. */
  readonly failure?: MutationFailure;
}

/**
 * Answers one AdmissionReview: only CREATE of core/v1 pods (no subresource) is mutated, anything
 * else is allowed unchanged. Dry-run requests take exactly the same path. Never throws.
 */
export function reviewResponse(review: AdmissionReview, extensions: readonly Extension[]): ReviewOutcome {
  const { request } = review;
  if (!isPodCreate(request) || request.object === undefined) {
    const decision = skippedDecision(NOT_POD_CREATE_REASON);
    return { reply: allowedResponse(review, { auditAnnotations: { [AUDIT_DECISION_KEY]: decision } }), result: 'skipped', decision };
  }
  const mutation = mutatePod(request.object, admissionContext(request), extensions);
  const auditAnnotations = { [AUDIT_DECISION_KEY]: mutation.decision };
  const reply =
    mutation.outcome === 'denied'
      ? deniedResponse(review, { code: mutation.code, message: mutation.message, warnings: mutation.warnings, auditAnnotations })
      : allowedResponse(review, { patch: mutation.patch, warnings: mutation.warnings, auditAnnotations });
  return {
    reply,
    result: resultOf(mutation),
    decision: mutation.decision,
    mutation,
    ...(mutation.failure ? { failure: mutation.failure } : {}),
  };
}

function resultOf(mutation: PodMutation): ReviewResult {
  if (mutation.failure) return 'failed';
  if (mutation.outcome === 'denied') return 'denied';
  return mutation.reports.some(({ result }) => result.type === 'mutated') ? 'mutated' : 'skipped';
}

export function isPodCreate(request: AdmissionRequest): boolean {
  return (
    request.operation === 'CREATE' &&
    request.resource.group === '' &&
    request.resource.version === 'v1' &&
    request.resource.resource === 'pods' &&
    (request.subResource ?? '') === ''
  );
}

/** Namespace and name come from the request: the object of a controller-made pod has neither. */
export function admissionContext(request: AdmissionRequest): AdmissionContext {
  const metadata = request.object ? objectMember(request.object, 'metadata') : undefined;
  return {
    uid: request.uid,
    namespace: request.namespace || (metadata && stringMember(metadata, 'namespace')) || '',
    name: request.name || (metadata && stringMember(metadata, 'name')) || '',
    operation: request.operation,
    dryRun: request.dryRun === true,
    userInfo: request.userInfo,
    kind: request.kind,
    resource: request.resource,
    subResource: request.subResource ?? '',
  };
}
