import { arrayMember, denied, type DeniedResult, ensureArrayMember, ensureObjectMember, type Extension, INJECT_ANNOTATION, type JsonObject, mutated, objectMember, setMember, skipped, SYSTEM_NAMESPACES } from '@outrigger/admission';
import type { AgentProfile } from '@outrigger/agent-profiles';
import { buildAgentContainer } from './agent-container.js';
import { agentPresence, containerNames, statusAnnotation, statusValue } from './injection-status.js';
import { parameterEnv } from './parameter-values.js';
import { podAnnotations, type PodAnnotations } from './pod-annotations.js';
import { enableAnnotation, requestedProfiles } from './requested-profiles.js';
import { serviceAccountTokenMount, withServiceAccountToken } from './service-account-token.js';
import { sidecarOwnedPaths } from './sidecar-owned-paths.js';
import { unknownProfileAnnotations } from './unknown-annotations.js';

export const SIDECAR_EXTENSION_NAME = 'sidecar';

/** An opted-in pod that carries the status annotation or a container of an agent's name, not as injected. */
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
}

/**
 * Injects the agent container of every profile a pod opts into. Order of checks: protected
 * namespace, opt-in (malformed opt-in is a 400 denial), a forged agent (the status annotation or an
 * agent-named container not as the injector writes them: 422), already injected (so reinvocation
 * is a no-op), then every parameter (422 denial). Only after all checks pass is the pod changed.
 */
export function sidecarExtension(options: SidecarExtensionOptions): Extension {
  const profiles = [...options.profiles];
  const protectedNamespaces = new Set<string>(options.protectedNamespaces ?? SYSTEM_NAMESPACES);
  return {
    name: SIDECAR_EXTENSION_NAME,
    ownedPaths: sidecarOwnedPaths(profiles),
    mutate(pod, ctx) {
      const annotations = podAnnotations(pod);
      if (protectedNamespaces.has(ctx.namespace)) {
        const asked = annotations.values.has(INJECT_ANNOTATION) || profiles.some((p) => annotations.values.has(enableAnnotation(p)));
        const warning = `namespace ${ctx.namespace} is protected: outrigger never injects sidecars there`;
        return skipped(SKIP_REASONS.protectedNamespace, asked ? [warning] : []);
      }

      const requested = requestedProfiles(annotations, profiles);
      if (requested.type === 'denied') return requested;
      const warnings = [...requested.warnings];
      if (requested.profiles.length === 0) return skipped(SKIP_REASONS.notOptedIn, warnings);

      const presence = requested.profiles.map((profile) => ({ profile, presence: agentPresence(pod, annotations, profile) }));
      const forged = presence.flatMap(({ presence: p }) => (p.kind === 'forged' ? [p.problem] : []));
      if (forged.length > 0) return Object.assign(denied(422, forged.join('; '), FORGED_AGENT_REASON), { warnings });
      const pending = presence.filter(({ presence: p }) => p.kind === 'absent').map(({ profile }) => profile);
      if (pending.length === 0) return skipped(SKIP_REASONS.alreadyInjected, warnings);

      const spec = objectMember(pod, 'spec');
      if (!spec || (arrayMember(spec, 'containers') ?? []).length === 0) return skipped(SKIP_REASONS.invalidPodSpec, warnings);

      const plans = planInjections(pending, annotations, containerNames(pod, 'containers'), warnings);
      if (!Array.isArray(plans)) return plans;
      const tokenMount = serviceAccountTokenMount(spec);
      for (const plan of plans) inject(pod, spec, plan, options.injectorVersion, tokenMount);
      return mutated({ warnings });
    },
  };
}

interface InjectionPlan {
  readonly profile: AgentProfile;
  readonly container: JsonObject;
}

function planInjections(
  profiles: readonly AgentProfile[],
  annotations: PodAnnotations,
  podContainers: readonly string[],
  warnings: string[],
): InjectionPlan[] | DeniedResult {
  const plans: InjectionPlan[] = [];
  for (const profile of profiles) {
    const env = parameterEnv(profile, annotations, podContainers);
    if (env.type === 'denied') return Object.assign({}, env, { warnings });
    const unknown = unknownProfileAnnotations(profile, annotations);
    if (unknown.length > 0) warnings.push(`profile ${profile.name}: unknown annotations ignored: ${unknown.join(', ')}`);
    plans.push({ profile, container: buildAgentContainer(profile, env.env) });
  }
  return plans;
}

/** Appends only (never inserts) so the patch is a single `add` at the end of each list. */
function inject(pod: JsonObject, spec: JsonObject, plan: InjectionPlan, injectorVersion: string, tokenMount: JsonObject | undefined): void {
  const list = plan.profile.nativeSidecar ? 'initContainers' : 'containers';
  withServiceAccountToken(plan.container, tokenMount);
  ensureArrayMember(spec, list).push(plan.container);
  const annotations = ensureObjectMember(ensureObjectMember(pod, 'metadata'), 'annotations');
  setMember(annotations, statusAnnotation(plan.profile), statusValue(plan.profile, injectorVersion));
}
