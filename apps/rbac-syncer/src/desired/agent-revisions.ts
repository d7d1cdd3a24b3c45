import { type AgentProfile, agentProfileSchema, MANAGED_BY_LABEL, MANAGED_BY_VALUE, PROFILE_LABEL, profileHash } from '@outrigger/agent-profiles';
import type { KubeObject } from '@outrigger/kube';

/** How many specs of one profile are kept besides the one in force: pods older than that many edits are restarted, or lose their binding. */
export const REVISIONS_KEPT = 10;

/** An agent revision as stored: the profile spec running pods were injected from, by its hash. */
export interface AgentRevision {
  readonly name: string;
  readonly profile: AgentProfile;
  readonly hash: string;
  /** The order in which they were first in force (the AgentProfile generation, or a counter for PROFILES_FILE). */
  readonly revision: number;
}

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

export function revisionName(profile: AgentProfile): string {
  return `${profile.name}-${profileHash(profile)}`;
}

/** A stored ControllerRevision parsed once into a profile, or undefined when it is not a valid one (never trusted to bind otherwise). */
export function projectRevision(obj: KubeObject): AgentRevision | undefined {
  const raw = obj as KubeObject & { data?: { spec?: unknown }; revision?: unknown };
  const parsed = agentProfileSchema.safeParse(raw.data?.spec);
  if (!parsed.success || obj.metadata?.labels?.[PROFILE_LABEL] !== parsed.data.name) return undefined;
  const profile = parsed.data;
  const hash = profileHash(profile);
  // A spec edited by hand no longer hashes to its name: ignored.
  if (obj.metadata?.name !== revisionName(profile)) return undefined;
  return { name: revisionName(profile), profile, hash, revision: typeof raw.revision === 'number' ? raw.revision : 0 };
}

/** The revisions of one profile to delete: all but the newest REVISIONS_KEPT and the one in force. */
export function revisionsToPrune(stored: readonly AgentRevision[], inForceHash: string | undefined): AgentRevision[] {
  const newestFirst = [...stored].sort((a, b) => b.revision - a.revision || (a.name < b.name ? -1 : 1));
  return newestFirst.filter((r) => r.hash !== inForceHash).slice(REVISIONS_KEPT);
}
