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

// Agent profiles
export {
  agentProfileSchema,
  ENABLE_SUFFIX,
  profilesFileSchema,
  STATUS_SUFFIX,
  type AgentContainerSpec,
  type AgentProfile,
  type AgentProfileInput,
  type ProfileParameter,
} from './profiles/profile-schema.js';
export { FORBIDDEN_VERBS, type PolicyRule } from './profiles/rbac-rule-schema.js';
export {
  ESCALATION_OPT_OUT_FIELD,
  ESCALATION_RULES,
  escalationOptOuts,
  type EscalationName,
  type EscalationRule,
} from './profiles/escalation-rules.js';
export { clusterWideRules, GUARDED_POD_SUBRESOURCES, profileWarnings } from './profiles/profile-warnings.js';
export { convertProfilesFile, parseProfiles } from './profiles/parse-profiles.js';
export { loadProfilesFile } from './profiles/load-profiles-file.js';
export {
  AGENT_PROFILE_API_VERSION,
  AGENT_PROFILE_KIND,
  agentProfileEntry,
  agentProfileObject,
  parseAgentProfile,
  profileConflicts,
  type AgentProfileEntry,
} from './profiles/agent-profile-object.js';
export { resolveProfiles, type ProfileInForce, type ProfileSet, type ProfileVerdict } from './profiles/profile-set.js';
export {
  AGENT_PROFILE_CRD_FILE,
  AGENT_PROFILE_GROUP,
  AGENT_PROFILE_PLURAL,
  AGENT_PROFILE_VERSION,
  agentProfileCrd,
  agentProfileCrdYaml,
} from './profiles/agent-profile-crd.js';
export { profileHash } from './profiles/profile-hash.js';
export { REFERENCE_PROFILE_FILE, referenceProfile } from './profiles/reference-profile.js';

// Sidecar injection
export {
  FORGED_AGENT_REASON,
  SIDECAR_EXTENSION_NAME,
  sidecarExtension,
  SKIP_REASONS,
  type SidecarExtensionOptions,
} from './sidecar/sidecar-extension.js';
export { enableAnnotation, INVALID_ANNOTATION_REASON, optInAnnotationKeys } from './sidecar/requested-profiles.js';
export { INVALID_PARAMETER_REASON, MAX_PARAMETER_LENGTH, MISSING_PARAMETER_REASON } from './sidecar/parameter-values.js';
export { agentPresence, imageRepository, statusAnnotation, statusValue, type AgentPresence } from './sidecar/injection-status.js';
export { sidecarOwnedPaths } from './sidecar/sidecar-owned-paths.js';

// Cluster registration, offline injection, shared constants
export * from './constants.js';
export {
  buildMutatingWebhookConfiguration,
  DEFAULT_TIMEOUT_SECONDS,
  DEFAULT_WEBHOOK_NAME,
  encodeCaBundle,
  excludeNamespaceExpression,
  NAMESPACE_NAME_LABEL,
  optInExpression,
  type MutatingWebhook,
  type MutatingWebhookConfiguration,
  type MutatingWebhookConfigurationOptions,
  type WebhookClientTarget,
} from './webhook-configuration.js';
export { injectManifests, uninjectManifests, type DocumentOutcome, type InjectManifestsOptions, type ManifestInjection } from './manifests.js';
export { parseGoBool } from './go-bool.js';
export { canonicalJson } from './canonical-json.js';
export { isJsonObject, type JsonObject, type JsonPrimitive, type JsonValue } from './json-value.js';
export { err, ok, type Result } from './result.js';

// For controllers that must tell which profiles a stored pod opted into (the rbac-syncer)
export { requestedProfiles, type RequestedProfiles } from './sidecar/requested-profiles.js';
export { podAnnotations, type PodAnnotations } from './sidecar/pod-annotations.js';
