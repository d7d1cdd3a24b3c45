// The sidecar extension: the agent container from a profile and a pod's annotations.
export {
  FORGED_AGENT_REASON,
  SIDECAR_EXTENSION_NAME,
  sidecarExtension,
  SKIP_REASONS,
  type SidecarExtensionOptions,
} from './sidecar-extension.js';
export { enableAnnotation, INVALID_ANNOTATION_REASON, optInAnnotationKeys } from './requested-profiles.js';
export { INVALID_PARAMETER_REASON, MAX_PARAMETER_LENGTH, MISSING_PARAMETER_REASON } from './parameter-values.js';
export { type NamespaceAnnotations, RESOURCE_OVERRIDE_REASON } from './resource-overrides.js';
export { NATIVE_SIDECAR_CHOICE_NOT_ALLOWED_REASON, nativeSidecarAnnotation } from './native-sidecar.js';
export { VOLUME_NAME_TAKEN_REASON } from './agent-pod-parts.js';
export { agentPresence, imageRepository, statusAnnotation, statusValue, type AgentPresence } from './injection-status.js';
export { sidecarOwnedPaths } from './sidecar-owned-paths.js';
export { HOST_NAMESPACE_REASON, HOST_NAMESPACES_OPT_IN } from './host-namespaces.js';
export { type NamespacePodSecurity, POD_SECURITY_REASON } from './pod-security-refusal.js';
// The agent's API token: one decision for the injection and for verifying a stored pod
export { agentToken, type AgentToken, keepPodTokenAnnotation, POD_TOKEN_NOT_ALLOWED_REASON, TOKEN_VOLUME_TAKEN_REASON } from './agent-token.js';
export { AGENT_TOKEN_VOLUME, agentTokenVolume, SERVICE_ACCOUNT_TOKEN_PATH, SERVICE_ACCOUNT_VOLUME_PREFIX } from './service-account-token.js';


// Offline injection
export { describeDocument, injectManifests, UNSUPPORTED_KIND, uninjectManifests, type DocumentOutcome, type InjectManifestsOptions, type ManifestInjection } from './manifests.js';

// For controllers that must tell which profiles a stored pod opted into (the rbac-syncer)
export { requestedProfiles, type RequestedProfiles } from './requested-profiles.js';
export { podAnnotations, type PodAnnotations } from './pod-annotations.js';
export { type AgentVerdict, verifyInjectedAgent } from './verify-injected-agent.js';
// Which agent a pod runs, against the profile in force and the specs kept as revisions (the syncer, the CLI)
export { AGENT_STATES, agentIsBindable, agentState, type AgentState, type AgentStateName, statusHash } from './agent-state.js';
export {
  agentRevisionName,
  type AgentRevision,
  type AgentRevisionObject,
  injectableWhenCreated,
  parseAgentRevision,
  podCreatedMs,
  REPLACED_AT_ANNOTATION,
  type RevisionLookup,
  revisionName,
  revisionObject,
  SPEC_CHANGE_LAG,
  specsWhenCreated,
  type StoredRevision,
} from './agent-revision.js';
export { AGENT_TOKEN_SHARED_REASON, sharedAgentToken } from './token-confinement.js';
export { canonicalQuantity } from './canonical-quantity.js';
