import { arrayMember, denied, type DeniedResult, ensureArrayMember, ensureObjectMember, type Extension, INJECT_ANNOTATION, type JsonObject, member, mutated, objectMember, setMember, skipped, SYSTEM_NAMESPACES } from '@outrigger/admission';
import { type AgentProfile, agentVariants, profileAppliesIn } from '@outrigger/agent-profiles';
import { buildAgentContainer } from './agent-container.js';
import { addPodParts, VOLUME_NAME_TAKEN_REASON, volumeClash } from './agent-pod-parts.js';
import { hostNamespaceProblem, HOST_NAMESPACE_REASON } from './host-namespaces.js';
import { agentPresence, type AgentPresence, containerNames, statusAnnotation, statusValue } from './injection-status.js';
import { parameterEnv } from './parameter-values.js';
import { podAnnotations, type PodAnnotations } from './pod-annotations.js';
import { type NamespaceAnnotations, resourceOverrides } from './resource-overrides.js';
import { enableAnnotation, requestedProfiles } from './requested-profiles.js';
import { agentToken, prepareAgentTokens } from './agent-token.js';
import { runsAsNativeSidecar } from './native-sidecar.js';
import { type NamespacePodSecurity, podSecurityProblem, POD_SECURITY_REASON } from './pod-security-refusal.js';
import { withServiceAccountToken } from './service-account-token.js';
import { sidecarOwnedPaths } from './sidecar-owned-paths.js';
import { unknownAnnotationRefusal } from './unknown-annotations.js';
import { verifyInjectedAgent } from './verify-injected-agent.js';
import { AGENT_TOKEN_SHARED_REASON, sharedTokenProblem } from './token-confinement.js';

export const SIDECAR_EXTENSION_NAME = 'sidecar';

/** A pod (opted in or not) that carries the status annotation or a container of an agent's name, not as injected. */
export const FORGED_AGENT_REASON = 'forged-agent';

export const SKIP_REASONS = {
  protectedNamespace: 'protected-namespace',
  notOptedIn: 'not-opted-in',
  alreadyInjected: 'already-injected',
  invalidPodSpec: 'invalid-pod-spec',
} as const;

export interface SidecarExtensionOptions {
  readonly profiles: readonly AgentProfile[];
  /** Recorded in the status annotation so a pod shows which injector gave it its agent. */
  readonly injectorVersion: string;
  /** Never mutated. Pass protectedNamespacesFor(installNamespace); defaults to the system ones. */
  readonly protectedNamespaces?: readonly string[];
  /** The Pod Security level each namespace enforces; without it no pod is refused for it. */
  readonly namespacePodSecurity?: NamespacePodSecurity;
  /** The annotations of each namespace (the agents' resource defaults); without it only pods set them. */
  readonly namespaceAnnotations?: NamespaceAnnotations;
  /** The labels of each namespace labelled for injection: where a profile with a namespaceSelector applies (profileAppliesIn). */
  readonly namespaceLabels?: (namespace: string) => Readonly<Record<string, string>> | undefined;
}

/**
 * Injects the agent container of every profile a pod opts into. Order of checks: protected
 * namespace, opt-in (malformed opt-in is a 400 denial), a forged agent of any profile, opted into
 * or not (the status annotation or an agent-named container that is not exactly the injector's:
 * 422), already injected (so reinvocation is a no-op), the node's namespaces (hostNetwork, hostPID,
 * hostIPC unless the profile allows them: 403), the namespace's enforced Pod Security level (403),
 * every parameter (422 denial), the resource overrides (403 not allowed, 422 out of bounds), the agent's volume names against the pod's (422), then the pod's
 * token (keep-pod-token not allowed: 403; a token that would not stay the agent's alone: 403).
 * Only after all checks pass is the pod changed.
 */
export function sidecarExtension(options: SidecarExtensionOptions): Extension {
  // A profile staging a change injects its agent as before unless given as the canary (agentFor).
  const profiles = options.profiles.map((profile) => agentVariants(profile).stable);
  const agentNames = new Set(profiles.map((profile) => profile.container.name));
  const protectedNamespaces = new Set<string>(options.protectedNamespaces ?? SYSTEM_NAMESPACES);
  // Any opt-in annotation, valid or not: whether the pod's author asked for an agent.
  const asksForAgent = (annotations: PodAnnotations) => annotations.values.has(INJECT_ANNOTATION) || profiles.some((p) => annotations.values.has(enableAnnotation(p)));
  return {
    name: SIDECAR_EXTENSION_NAME,
    ownedPaths: sidecarOwnedPaths(profiles),
    claims(pod, ctx) {
      if (protectedNamespaces.has(ctx.namespace)) return undefined;
      const annotations = podAnnotations(pod);
      if (asksForAgent(annotations)) return 'opts into an agent';
      if (profiles.some((p) => annotations.values.has(statusAnnotation(p)))) return 'carries an agent status annotation';
      const containers = [...containerNames(pod, 'containers'), ...containerNames(pod, 'initContainers')];
      return containers.some((name) => agentNames.has(name)) ? 'carries a container named like an agent' : undefined;
    },
    mutate(pod, ctx) {
      const annotations = podAnnotations(pod);
      if (protectedNamespaces.has(ctx.namespace)) {
        const asked = asksForAgent(annotations);
        const warning = `namespace ${ctx.namespace} is protected: outrigger never injects sidecars there`;
        return skipped(SKIP_REASONS.protectedNamespace, asked ? [warning] : []);
      }

      const requested = requestedProfiles(annotations, profiles);
      if (requested.type === 'denied') return requested;
      const warnings = [...requested.warnings];

      // Every profile, opted into or not: a forged agent must not wait for an opt-in added by UPDATE.
      const presence = profiles.map((profile) => ({ profile, presence: exactPresence(pod, annotations, profile) }));
      const forged = presence.flatMap(({ presence: p }) => (p.kind === 'forged' ? [p.problem] : []));
      if (forged.length > 0) return Object.assign(denied(422, forged.join('; '), FORGED_AGENT_REASON), { warnings });
      if (requested.profiles.length === 0) return skipped(SKIP_REASONS.notOptedIn, warnings);
      const labels = options.namespaceLabels?.(ctx.namespace);
      const elsewhere = requested.profiles.filter((profile) => !profileAppliesIn(profile, labels));
      for (const profile of elsewhere) warnings.push(`profile ${profile.name} does not apply in namespace ${ctx.namespace} (its spec.namespaceSelector does not pick it): no agent`);
      if (elsewhere.length === requested.profiles.length) return skipped(SKIP_REASONS.notOptedIn, warnings);
      const absent = new Set(presence.filter(({ presence: p }) => p.kind === 'absent').map(({ profile }) => profile));
      const pending = requested.profiles.filter((profile) => absent.has(profile) && !elsewhere.includes(profile));
      if (pending.length === 0) return skipped(SKIP_REASONS.alreadyInjected, warnings);

      const spec = objectMember(pod, 'spec');
      if (!spec || (arrayMember(spec, 'containers') ?? []).length === 0) return skipped(SKIP_REASONS.invalidPodSpec, warnings);
      // The API server never sends these as anything but lists; appending to another value would be no patch of ours.
      const notList = APPENDED_LISTS.find((key) => member(spec, key) !== undefined && !Array.isArray(member(spec, key)));
      if (notList !== undefined) return Object.assign(denied(400, `spec.${notList} is not a list`, SKIP_REASONS.invalidPodSpec), { warnings });
      const onHost = pending.flatMap((profile) => hostNamespaceProblem(spec, profile) ?? []);
      if (onHost.length > 0) return Object.assign(denied(403, onHost.join('; '), HOST_NAMESPACE_REASON), { warnings });
      const enforced = options.namespacePodSecurity?.(ctx.namespace);
      const belowLevel = pending.flatMap((profile) => podSecurityProblem(profile, ctx.namespace, enforced) ?? []);
      if (belowLevel.length > 0) return Object.assign(denied(403, belowLevel.join('; '), POD_SECURITY_REASON), { warnings });

      const plans = planInjections(pending, pod, annotations, { name: ctx.namespace, annotations: options.namespaceAnnotations?.(ctx.namespace) }, warnings);
      if (!Array.isArray(plans)) return plans;
      const clash = volumeClash(spec, pending);
      if (clash !== undefined) return Object.assign(denied(422, clash, VOLUME_NAME_TAKEN_REASON), { warnings });
      const tokens = prepareAgentTokens(pod, spec, pending);
      if (tokens.type === 'denied') return Object.assign({}, tokens, { warnings });
      const shared = sharedTokenProblem(pod, spec, pending, agentNames);
      if (shared !== undefined) return Object.assign(denied(403, shared, AGENT_TOKEN_SHARED_REASON), { warnings });
      for (const plan of plans) inject(pod, spec, plan, options.injectorVersion, tokens.automountTurnedOff);
      return mutated({ warnings });
    },
  };
}

/** agentPresence, where `injected` must also be exactly what the injector renders for this pod. */
function exactPresence(pod: JsonObject, annotations: PodAnnotations, profile: AgentProfile): AgentPresence {
  const presence = agentPresence(pod, annotations, profile);
  if (presence.kind !== 'injected') return presence;
  const verdict = verifyInjectedAgent(pod, profile);
  if (verdict.ok) return presence;
  const problem = `profile ${profile.name}: the pod carries annotation ${statusAnnotation(profile)} and a ${profile.container.name} container that is not the injector's (${verdict.problem}); remove both and opt in with ${enableAnnotation(profile)}: "true" so that the injector adds the agent (if nobody wrote them, a mutating webhook called after Outrigger's changed the agent: keep container ${profile.container.name} out of its reach, or give the profile the value it sets)`;
  return { kind: 'forged', problem };
}

interface InjectionPlan {
  readonly profile: AgentProfile;
  readonly container: JsonObject;
  readonly list: 'initContainers' | 'containers';
}

function planInjections(
  profiles: readonly AgentProfile[],
  pod: JsonObject,
  annotations: PodAnnotations,
  namespace: { readonly name: string; readonly annotations: Readonly<Record<string, string>> | undefined },
  warnings: string[],
): InjectionPlan[] | DeniedResult {
  const plans: InjectionPlan[] = [];
  const podContainers = containerNames(pod, 'containers');
  for (const profile of profiles) {
    // First: a misspelt annotation explains a "required" or a bound refusal that would follow.
    const unknown = unknownAnnotationRefusal(profile, annotations);
    if (unknown) return Object.assign({}, unknown, { warnings });
    const env = parameterEnv(profile, annotations, podContainers);
    if (env.type === 'denied') return Object.assign({}, env, { warnings });
    const native = runsAsNativeSidecar(profile, pod);
    if (typeof native !== 'boolean') return Object.assign({}, native, { warnings });
    const resources = resourceOverrides(profile, annotations, namespace.annotations, namespace.name);
    if ('type' in resources) return Object.assign({}, resources, { warnings });
    plans.push({ profile, container: buildAgentContainer(profile, env.env, native, resources), list: native ? 'initContainers' : 'containers' });
  }
  return plans;
}

/** The pod's lists an injection may append to. */
const APPENDED_LISTS = ['containers', 'initContainers', 'volumes', 'imagePullSecrets'] as const;

/** Appends only (never inserts) so the patch is a single `add` at the end of each list. */
function inject(pod: JsonObject, spec: JsonObject, plan: InjectionPlan, injectorVersion: string, automountTurnedOff: boolean): void {
  const list = plan.list;
  const token = agentToken(plan.profile, pod);
  withServiceAccountToken(plan.container, 'mount' in token ? token.mount : undefined);
  const turnedOffForIt = automountTurnedOff && 'podTokenRemoved' in token && token.podTokenRemoved;
  ensureArrayMember(spec, list).push(plan.container);
  const added = addPodParts(spec, plan.profile);
  const annotations = ensureObjectMember(ensureObjectMember(pod, 'metadata'), 'annotations');
  setMember(annotations, statusAnnotation(plan.profile), statusValue(plan.profile, injectorVersion, turnedOffForIt, added));
}
