import { type AgentProfile, agentPodSecurityLevel, meetsPodSecurity, POD_SECURITY_ENFORCE_LABEL, POD_SECURITY_OPT_OUT_FIELD, type PodSecurityLevel } from '@outrigger/agent-profiles';

/** An opted-in pod in a namespace whose enforced Pod Security level the agent does not meet. */
export const POD_SECURITY_REASON = 'pod-security';

/** The level a namespace enforces (its `pod-security.kubernetes.io/enforce` label), undefined when unknown. */
export type NamespacePodSecurity = (namespace: string) => PodSecurityLevel | undefined;

/**
 * Why the agent may not go into a pod of this namespace, naming the profile and its field, so the
 * pod's author never meets a Pod Security error about a container they did not write; undefined
 * when it may (or when the namespace's level is unknown: the API server's defaults then apply).
 */
export function podSecurityProblem(profile: AgentProfile, namespace: string, enforced: PodSecurityLevel | undefined): string | undefined {
  if (enforced === undefined) return undefined;
  const level = agentPodSecurityLevel(profile);
  if (meetsPodSecurity(level, enforced)) return undefined;
  return (
    `profile ${profile.name}: its agent meets only the ${level} Pod Security level (spec.${POD_SECURITY_OPT_OUT_FIELD}: ${profile[POD_SECURITY_OPT_OUT_FIELD] ?? 'unset'}) ` +
    `and namespace ${namespace} enforces ${enforced} (label ${POD_SECURITY_ENFORCE_LABEL}), which would refuse the pod; use a profile whose agent meets ${enforced}`
  );
}
