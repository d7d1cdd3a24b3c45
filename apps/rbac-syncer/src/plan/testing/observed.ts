import { type AgentProfile, referenceProfile } from '@outrigger/agent-profiles';
import type { ObservedBinding, ObservedProfile, ObservedRole } from '../observed-profile.js';

/** The reference profile, as the plans' tests take it. */
export const PROFILE: AgentProfile = referenceProfile();
export const RBAC = PROFILE.rbac ?? { clusterRole: 'xxl-agent-exec', binding: { kind: 'ClusterRoleBinding' as const, name: 'xxl-agent-exec' }, rules: [] };

export const OWN_ROLE: ObservedRole = { name: RBAC.clusterRole, ownedBy: PROFILE.name, rules: RBAC.rules };

export const sa = (namespace: string, name = 'default') => ({ kind: 'ServiceAccount' as const, namespace, name });

/** One per-namespace ClusterRoleBinding of the reference profile as the watch would show it. */
export function crb(namespace: string, names: readonly string[]): ObservedBinding {
  return { kind: 'ClusterRoleBinding', name: `${RBAC.binding.name}.${namespace}`, namespace, roleRef: RBAC.clusterRole, resourceVersion: '1', subjects: [...names].sort().map((n) => sa(namespace, n)), untidy: false };
}

/** A state in which everything is in place and nothing is bound; override what a test is about. */
export function observed(over: Partial<ObservedProfile> = {}): ObservedProfile {
  return {
    name: PROFILE.name,
    profile: PROFILE,
    role: OWN_ROLE,
    bindings: [],
    live: new Map(),
    sharing: new Map(),
    labelledNamespaces: new Set(['a', 'b', 'c', 'kube-system']),
    protectedNamespaces: ['kube-system', 'outrigger-system'],
    viewComplete: true,
    execGuardProblem: undefined,
    goneSince: new Map(),
    nowMs: 1_000_000,
    graceMs: 60_000,
    revokedKeepMs: 300_000,
    maxPerNamespace: 1_000,
    ...over,
  };
}

/**
 * What the syncer observes to plan one namespace alone: that namespace's bindings and those of
 * earlier versions (which hold several), its live ServiceAccounts, its label verdict, its memory.
 */
export function inNamespace(o: ObservedProfile, namespace: string): ObservedProfile {
  const only = <V>(map: ReadonlyMap<string, V>) => new Map([...map].filter(([ns]) => ns === namespace));
  return {
    ...o,
    bindings: o.bindings.filter((b) => b.namespace === namespace || b.namespace === undefined),
    live: only(o.live),
    sharing: only(o.sharing),
    labelledNamespaces: new Set([...o.labelledNamespaces].filter((ns) => ns === namespace)),
    goneSince: only(o.goneSince),
  };
}
