import { type LabelSelector, selectsLabels } from './label-selector.js';
import type { AgentProfile } from './profile-schema.js';

/**
 * The two agents a profile injects while a change is staged: `stable` for every namespace, and
 * `canary` (the container with the canary's fields) for the namespaces its selector picks. Each
 * is a profile without `canary`, so each has the hash of what it injects: promoting a canary (its
 * fields become the container's, `canary` removed) makes the profile hash as the canary did, and
 * rolling back (removing `canary`) makes it hash as before the canary: in both cases the pods
 * already running the agent that stays are current.
 */
export interface AgentVariants {
  readonly stable: AgentProfile;
  readonly canary?: { readonly profile: AgentProfile; readonly namespaceSelector: LabelSelector };
}

const variants = new WeakMap<AgentProfile, AgentVariants>();

export function agentVariants(profile: AgentProfile): AgentVariants {
  let known = variants.get(profile);
  if (known) return known;
  const { canary, ...withoutCanary } = profile;
  if (!canary) {
    known = { stable: profile };
  } else {
    const { namespaceSelector, ...fields } = canary;
    known = { stable: withoutCanary, canary: { profile: { ...withoutCanary, container: { ...withoutCanary.container, ...fields } }, namespaceSelector } };
  }
  variants.set(profile, known);
  return known;
}

/** The agent a pod in a namespace with these labels gets. */
export function agentFor(profile: AgentProfile, namespaceLabels: Readonly<Record<string, string>>): AgentProfile {
  const { stable, canary } = agentVariants(profile);
  return canary && selectsLabels(canary.namespaceSelector, namespaceLabels) ? canary.profile : stable;
}
