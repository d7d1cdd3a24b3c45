import { type JsonObject, member } from '@outrigger/admission';
import type { AgentProfile } from '@outrigger/agent-profiles';

/** An opted-in pod on one of the node's namespaces, refused unless the profile allows it. */
export const HOST_NAMESPACE_REASON = 'host-namespace';

/** The profile field that allows it: loud, because the agent then runs in the node's namespaces. */
export const HOST_NAMESPACES_OPT_IN = 'dangerouslyAllowHostNamespaces';

const HOST_NAMESPACES = [
  { field: 'hostNetwork', risk: "the agent's port would be open on the node's network" },
  { field: 'hostPID', risk: "the agent would see the node's processes" },
  { field: 'hostIPC', risk: "the agent would share the node's IPC" },
] as const;

/** Why this profile's agent may not run in this pod spec, naming both fields; undefined if it may. */
export function hostNamespaceProblem(spec: JsonObject, profile: AgentProfile): string | undefined {
  if (profile[HOST_NAMESPACES_OPT_IN] === true) return undefined;
  const shared = HOST_NAMESPACES.find(({ field }) => member(spec, field) === true);
  if (!shared) return undefined;
  return `the pod sets spec.${shared.field}: true and ${shared.risk}; profile ${profile.name} does not set spec.${HOST_NAMESPACES_OPT_IN}: true (remove spec.${shared.field} or the opt-in)`;
}
