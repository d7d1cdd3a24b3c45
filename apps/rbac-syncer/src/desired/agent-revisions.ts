import type { AgentRevision } from '@outrigger/sidecar';

/** How many specs of one profile are kept besides the one in force: pods older than that many edits are restarted, or lose their binding. */
export const REVISIONS_KEPT = 10;

/** The revisions of one profile to delete: all but the newest REVISIONS_KEPT and those in force (the agent, and a staged change's). */
export function revisionsToPrune(stored: readonly AgentRevision[], inForce: ReadonlySet<string>): AgentRevision[] {
  const newestFirst = [...stored].sort((a, b) => b.revision - a.revision || (a.name < b.name ? -1 : 1));
  return newestFirst.filter((r) => !inForce.has(r.hash)).slice(REVISIONS_KEPT);
}
