// AdmissionReview in and out
export * from './admission-types.js';
export { parseAdmissionReview } from './parse-admission-review.js';
export { jsonDepth, MAX_JSON_DEPTH, parseJsonBody } from './parse-json-body.js';
export {
  allowedResponse,
  deniedResponse,
  statusReasonFor,
  MAX_WARNING_LENGTH,
  type AllowedResponseOptions,
  type DeniedResponseOptions,
} from './admission-responses.js';
export {
  AUDIT_DECISION_KEY,
  DECISION_INJECTED,
  deniedDecision,
  isValidAuditKey,
  skippedDecision,
} from './audit.js';

// Patches and what the injector owns
export { applyPatchCopy, computePatch, decodePatch, encodePatch, type PatchOperation } from './patch.js';
export {
  assertOwnedOps,
  findUnownedOps,
  mergeOwnedPaths,
  NO_OWNED_PATHS,
  UnownedPatchError,
  type OwnedPaths,
  type RemovableItems,
} from './owned-paths.js';
export { escapePointerToken, jsonPointer, pointerTokens, unescapePointerToken, valueAtPointer } from './json-pointer.js';

// Extensions and the mutate path
export {
  denied,
  mutated,
  skipped,
  type AdmissionContext,
  type DeniedResult,
  type Extension,
  type ExtensionResult,
  type MutatedResult,
  type SkippedResult,
} from './extension.js';
export {
  INTERNAL_ERROR_REASON,
  mutatePod,
  type AllowedMutation,
  type DeniedMutation,
  type ExtensionReport,
  type MutationFailure,
  type PodMutation,
} from './mutate.js';
export { admissionContext, isPodCreate, NOT_POD_CREATE_REASON, reviewResponse, type ReviewOutcome, type ReviewResult } from './answer-review.js';

// Cluster registration, shared constants and JSON helpers
export * from './constants.js';
export {
  buildMutatingWebhookConfiguration,
  DEFAULT_TIMEOUT_SECONDS,
  DEFAULT_WEBHOOK_NAME,
  encodeCaBundle,
  excludeNamespaceExpression,
  NAMESPACE_NAME_LABEL,
  markedPodExpression,
  injectionNamespaceSelector,
  type MutatingWebhook,
  type MutatingWebhookConfiguration,
  type MutatingWebhookConfigurationOptions,
  type WebhookClientTarget,
} from './webhook-configuration.js';
export { GO_BOOL_SPELLINGS, parseGoBool } from './go-bool.js';
export { canonicalJson } from './canonical-json.js';
export { namespacesDigest, type HeldNamespace } from './namespaces-digest.js';
export { NAMESPACES_HELD_ANNOTATIONS, namespacesHeldAnnotations, namespacesHeldFrom, type NamespacesHeld } from './held-namespaces.js';
export * from './json-value.js';
export { err, ok, type Result } from './result.js';

export {
  DNS_LABEL,
  DNS_LABEL_MAX,
  DNS_SUBDOMAIN,
  DNS_SUBDOMAIN_MAX,
  ENV_FIELD_PATH,
  ENV_VAR_NAME,
  isAnnotationPrefix,
  isDnsLabel,
  isDnsSubdomain,
  isQualifiedNamePart,
  PORT_NAME,
  PORT_NAME_MAX,
  QUALIFIED_NAME_PART,
  QUALIFIED_NAME_PART_MAX,
  QUANTITY,
} from './k8s-names.js';
export { BINARY_SUFFIXES, DECIMAL_SUFFIXES, type ParsedQuantity, parseQuantity } from './quantity.js';
