import { isJsonObject, type JsonObject } from '@outrigger/admission';
import { type AgentProfile, agentVariants, PROFILE_HASH_PATTERN } from '@outrigger/agent-profiles';
import type { RevisionLookup } from './agent-revision.js';
import { statusAnnotation } from './injection-status.js';
import { podAnnotations } from './pod-annotations.js';
import { verifyInjectedAgent } from './verify-injected-agent.js';

/**
 * What a pod that opted into a profile runs of it:
 * - `current`: the agent exactly as the profile in force renders it for this pod (`canary`: the
 *   agent of the profile's staged change, which counts as current wherever the pod runs);
 * - `outdated`: an agent injected from an earlier spec whose agent differs from today's (`hash`
 *   names that spec; `verified` when that spec is known and the agent is exactly its rendering:
 *   only then does it keep its RBAC);
 * - `missing`: no agent at all (created while the webhook was off or ignored, or before install).
 * Restarting the pod's workload turns `outdated` and `missing` into `current`.
 */
export type AgentState =
  | { readonly state: 'current'; readonly canary?: true }
  | { readonly state: 'outdated'; readonly hash: string | undefined; readonly verified: boolean }
  | { readonly state: 'missing' };

export type AgentStateName = AgentState['state'];
export const AGENT_STATES: readonly AgentStateName[] = ['current', 'outdated', 'missing'];

/** `inForce`: every profile in force (for agents sharing a token volume, see verifyInjectedAgent). */
export function agentState(pod: JsonObject, profile: AgentProfile, inForce: readonly AgentProfile[], revisions: RevisionLookup): AgentState {
  const { stable, canary } = agentVariants(profile);
  if (verifyInjectedAgent(pod, stable, inForce).ok) return { state: 'current' };
  if (canary && verifyInjectedAgent(pod, canary.profile, inForce).ok) return { state: 'current', canary: true };
  const status = podAnnotations(pod).values.get(statusAnnotation(profile));
  if (status === undefined && !hasContainer(pod, profile.container.name)) return { state: 'missing' };
  const hash = statusHash(status);
  const earlier = hash === undefined ? undefined : revisions(profile.name, hash);
  return { state: 'outdated', hash, verified: earlier !== undefined && verifyInjectedAgent(pod, earlier, inForce).ok };
}

/** Whether the pod keeps the profile's RBAC: an agent the injector wrote, from the spec in force or a known earlier one. */
export function agentIsBindable(state: AgentState): boolean {
  return state.state === 'current' || (state.state === 'outdated' && state.verified);
}

/** The spec hash the injection status names (`{profile, hash, version}`), if it has profileHash's form: the annotation is the pod author's to write. */
export function statusHash(status: string | undefined): string | undefined {
  try {
    const parsed: unknown = status === undefined ? undefined : JSON.parse(status);
    const hash = isJsonObject(parsed) ? parsed['hash'] : undefined;
    return typeof hash === 'string' && PROFILE_HASH_PATTERN.test(hash) ? hash : undefined;
  } catch {
    return undefined;
  }
}

function hasContainer(pod: JsonObject, name: string): boolean {
  const spec = isJsonObject(pod['spec']) ? pod['spec'] : {};
  return (['containers', 'initContainers'] as const).some((list) => {
    const containers = spec[list];
    return Array.isArray(containers) && containers.some((c) => isJsonObject(c) && c['name'] === name);
  });
}
