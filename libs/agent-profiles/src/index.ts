// Agent profiles: the schema both services judge profiles with, the AgentProfile API object and
// its CRD, the set in force, the reference profile.
export {
  agentProfileSchema,
  ENABLE_SUFFIX,
  KEEP_POD_TOKEN_SUFFIX,
  NATIVE_SIDECAR_SUFFIX,
  profilesFileSchema,
  STATUS_SUFFIX,
  type AgentContainerSpec,
  type AgentProfile,
  type AgentProfileInput,
  type ProfileParameter,
  type RbacBindingKind,
} from './profile-schema.js';
export { FORBIDDEN_VERBS, type PolicyRule } from './rbac-rule-schema.js';
export {
  ESCALATION_OPT_OUT_FIELD,
  ESCALATION_RULES,
  escalationOptOuts,
  type EscalationName,
  type EscalationRule,
} from './escalation-rules.js';
export { clusterWideRules, GUARDED_POD_SUBRESOURCES, profileWarnings } from './profile-warnings.js';
export {
  agentPodSecurityLevel,
  meetsPodSecurity,
  parsePodSecurityLevel,
  POD_SECURITY_ENFORCE_LABEL,
  POD_SECURITY_LEVELS,
  POD_SECURITY_OPT_OUT_FIELD,
  type PodSecurityLevel,
} from './pod-security.js';
export { convertProfilesFile, parseProfiles } from './parse-profiles.js';
export { loadProfilesFile } from './load-profiles-file.js';
export {
  AGENT_PROFILE_API_VERSION,
  AGENT_PROFILE_KIND,
  agentProfileEntry,
  agentProfileObject,
  parseAgentProfile,
  profileConflicts,
  type AgentProfileEntry,
} from './agent-profile-object.js';
export { resolveProfiles, type ProfileInForce, type ProfileSet, type ProfileVerdict } from './profile-set.js';
export { describeVerdict, ProfileSetTracker, type ProfileSetChange } from './profile-set-tracker.js';
export { ProfileSource, type ProfileSourceLog } from './profile-source.js';
export {
  AGENT_PROFILE_CRD_FILE,
  AGENT_PROFILE_GROUP,
  AGENT_PROFILE_PLURAL,
  AGENT_PROFILE_VERSION,
  agentProfileCrd,
  agentProfileCrdYaml,
} from './agent-profile-crd.js';
export { PROFILE_HASH_PATTERN, profileHash } from './profile-hash.js';
export { REFERENCE_PROFILE_FILE, referenceProfile } from './reference-profile.js';

export { compileParameterPattern, isHttpUrl } from './parameter-checks.js';
export { OVERRIDABLE_RESOURCES, type OverridableResource, quantityValue, type ResourceOverrides } from './resource-overrides.js';
export { MANAGED_BY_LABEL, MANAGED_BY_VALUE, NAMESPACE_LABEL, PROFILE_LABEL, REVOKED_ANNOTATION, REVOKED_UNTIL_ANNOTATION } from './synced-rbac-labels.js';
// A staged agent change: which agent a namespace gets while a profile has a canary
export { agentFor, agentVariants, type AgentVariants } from './canary.js';
export { CANARY_FIELDS } from './profile-schema.js';
export { type LabelSelector, labelSelectorSchema, selectsLabels } from './label-selector.js';
// Where a profile applies: the namespaces its namespaceSelector picks among those labelled for injection
export { profileAppliesIn } from './profile-scope.js';
export { PROFILE_EXAMPLES_DIR, PROFILE_REFERENCE_FILE, profileReferenceMarkdown, readProfileExamples } from './profile-reference.js';
