import type { AdmissionResponse, AdmissionReview, AdmissionReviewReply } from './admission-types.js';
import { isValidAuditKey } from './audit.js';
import { encodePatch, type PatchOperation } from './patch.js';

export interface AllowedResponseOptions {
  readonly patch?: readonly PatchOperation[];
  readonly warnings?: readonly string[];
  readonly auditAnnotations?: Readonly<Record<string, string>>;
}

export interface DeniedResponseOptions {
  /** HTTP-style code: 400 for a malformed request, 422 for an invalid field, 403 for a policy refusal. */
  readonly code: number;
  readonly message: string;
  /** metav1.StatusReason; derived from the code when omitted. */
  readonly reason?: string;
  readonly warnings?: readonly string[];
  readonly auditAnnotations?: Readonly<Record<string, string>>;
}

/** kube-apiserver drops or truncates warnings past this length; we cut them ourselves. */
export const MAX_WARNING_LENGTH = 256;

/** Allows the request in the review's own apiVersion and uid; an empty patch sends no patch. */
export function allowedResponse(review: AdmissionReview, options: AllowedResponseOptions = {}): AdmissionReviewReply {
  const patch = options.patch ?? [];
  return reply(review, {
    uid: review.request.uid,
    allowed: true,
    ...(patch.length > 0 ? { patchType: 'JSONPatch' as const, patch: encodePatch(patch) } : {}),
    ...commonFields(options),
  });
}

export function deniedResponse(review: AdmissionReview, options: DeniedResponseOptions): AdmissionReviewReply {
  if (!Number.isInteger(options.code) || options.code < 400 || options.code > 599) {
    throw new RangeError(`denial code must be an HTTP error code (got ${options.code})`);
  }
  return reply(review, {
    uid: review.request.uid,
    allowed: false,
    status: { code: options.code, message: options.message, reason: options.reason ?? statusReasonFor(options.code) },
    ...commonFields(options),
  });
}

/** The metav1.StatusReason kube-apiserver itself uses for each code. */
export function statusReasonFor(code: number): string {
  switch (code) {
    case 400:
      return 'BadRequest';
    case 401:
      return 'Unauthorized';
    case 403:
      return 'Forbidden';
    case 404:
      return 'NotFound';
    case 409:
      return 'Conflict';
    case 422:
      return 'Invalid';
    case 429:
      return 'TooManyRequests';
    case 500:
      return 'InternalError';
    case 503:
      return 'ServiceUnavailable';
    case 504:
      return 'Timeout';
    default:
      return code >= 500 ? 'InternalError' : 'BadRequest';
  }
}

function reply(review: AdmissionReview, response: AdmissionResponse): AdmissionReviewReply {
  return { apiVersion: review.apiVersion, kind: 'AdmissionReview', response };
}

function commonFields(options: AllowedResponseOptions | DeniedResponseOptions): Partial<AdmissionResponse> {
  const warnings = normalizeWarnings(options.warnings ?? []);
  const audit = options.auditAnnotations ?? {};
  for (const key of Object.keys(audit)) {
    // A bad key makes kube-apiserver reject the whole response: fail loudly in tests instead.
    if (!isValidAuditKey(key)) throw new RangeError(`audit annotation key ${JSON.stringify(key)} is not a qualified name without a prefix`);
  }
  // Object.assign, not a literal that starts with a spread: see no-restricted-syntax in eslint.config.mjs.
  return Object.assign(
    {},
    warnings.length > 0 ? { warnings } : {},
    Object.keys(audit).length > 0 ? { auditAnnotations: { ...audit } } : {},
  );
}

function normalizeWarnings(warnings: readonly string[]): string[] {
  const cut = warnings.map((warning) =>
    warning.length > MAX_WARNING_LENGTH ? `${warning.slice(0, MAX_WARNING_LENGTH - 1)}…` : warning,
  );
  return [...new Set(cut)];
}
