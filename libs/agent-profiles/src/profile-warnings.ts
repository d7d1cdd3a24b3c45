import { escalationOptOuts } from './escalation-rules.js';
import { podSecurityOptOut } from './pod-security.js';
import type { AgentProfile } from './profile-schema.js';

/** What the exec guard confines to the agent's own namespace (CONNECT on these pod subresources). */
export const GUARDED_POD_SUBRESOURCES = ['pods/exec', 'pods/attach', 'pods/portforward'] as const;

/**
 * Rules of a ClusterRoleBinding profile that reach every namespace: anything but the core group's
 * guarded pod subresources, since admission cannot confine reads or other verbs.
 */
export function clusterWideRules(profile: AgentProfile): string[] {
  if (profile.rbac?.binding.kind !== 'ClusterRoleBinding') return [];
  return profile.rbac.rules.flatMap((rule, index) => {
    const unguarded = rule.apiGroups.some((g) => g !== '') || rule.resources.some((r) => !(GUARDED_POD_SUBRESOURCES as readonly string[]).includes(r));
    return unguarded
      ? [
          `profile ${profile.name}: rbac.rules[${index}] (${rule.verbs.join(', ')} on ${rule.resources.join(', ')}) applies in every namespace: ` +
            `the exec guard confines only ${GUARDED_POD_SUBRESOURCES.join(', ')}; use rbac.binding.kind RoleBinding to keep it in the agent's own namespace`,
        ]
      : [];
  });
}

/** Everything about a loaded profile an operator should hear at startup (logged as warnings by both services). */
export function profileWarnings(profile: AgentProfile): string[] {
  return [...escalationOptOuts(profile), ...clusterWideRules(profile), ...podSecurityOptOut(profile)];
}
