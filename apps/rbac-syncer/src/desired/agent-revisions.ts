import { type AgentProfile, MANAGED_BY_LABEL, MANAGED_BY_VALUE, PROFILE_LABEL } from '@outrigger/agent-profiles';
import type { KubeObject } from '@outrigger/kube';
import { type AgentRevision, revisionName } from '@outrigger/sidecar';

/** How many specs of one profile are kept besides the one in force: pods older than that many edits are restarted, or lose their binding. */
export const REVISIONS_KEPT = 10;

/** Its ControllerRevision (in the syncer's namespace): named after profile and hash, so writing it twice is harmless. */
export function revisionObject(profile: AgentProfile, revision: number, namespace: string): KubeObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'ControllerRevision',
    metadata: { name: revisionName(profile), namespace, labels: { [MANAGED_BY_LABEL]: MANAGED_BY_VALUE, [PROFILE_LABEL]: profile.name } },
    data: { spec: profile },
    revision,
  } as KubeObject;
}

/** The revisions of one profile to delete: all but the newest REVISIONS_KEPT and those in force (the agent, and a staged change's). */
export function revisionsToPrune(stored: readonly AgentRevision[], inForce: ReadonlySet<string>): AgentRevision[] {
  const newestFirst = [...stored].sort((a, b) => b.revision - a.revision || (a.name < b.name ? -1 : 1));
  return newestFirst.filter((r) => !inForce.has(r.hash)).slice(REVISIONS_KEPT);
}
