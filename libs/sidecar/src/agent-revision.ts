import { isJsonObject, type JsonObject, objectMember, stringMember } from '@outrigger/admission';
import { type AgentProfile, agentProfileSchema, PROFILE_LABEL, profileHash } from '@outrigger/agent-profiles';

/**
 * A profile spec that injected running pods, as the rbac-syncer keeps it (a ControllerRevision
 * `<profile>-<hash>` in the install namespace): read by the syncer to bind and count, and by the CLI.
 */
export interface AgentRevision {
  readonly name: string;
  readonly profile: AgentProfile;
  readonly hash: string;
  /** The order in which they were first in force (the AgentProfile generation, or a counter for PROFILES_FILE). */
  readonly revision: number;
  /** When the syncer saw another spec take its place (ms); absent while it is in force, and on revisions of earlier versions. */
  readonly replacedAt?: number;
}

/** On a revision: when its spec stopped being in force (RFC 3339), written by the rbac-syncer. */
export const REPLACED_AT_ANNOTATION = 'outrigger.dev/replaced-at';

/** The stored spec of a profile name and hash, if known. */
export type RevisionLookup = (profile: string, hash: string) => AgentProfile | undefined;

export function revisionName(profile: AgentProfile): string {
  return agentRevisionName(profile.name, profileHash(profile));
}

/** The name of the revision that holds profile `profile`'s spec with this hash. */
export function agentRevisionName(profile: string, hash: string): string {
  return `${profile}-${hash}`;
}

/** A stored ControllerRevision parsed once into a profile, or undefined when it is not a valid one (never trusted to bind otherwise). */
export function parseAgentRevision(obj: unknown): AgentRevision | undefined {
  if (!isJsonObject(obj)) return undefined;
  const metadata = objectMember(obj, 'metadata');
  const labels = metadata && objectMember(metadata, 'labels');
  const data = objectMember(obj, 'data');
  const parsed = agentProfileSchema.safeParse(data?.['spec']);
  if (!parsed.success || (labels && stringMember(labels, PROFILE_LABEL)) !== parsed.data.name) return undefined;
  const profile = parsed.data;
  // A spec edited by hand no longer hashes to its name: ignored.
  if ((metadata && stringMember(metadata, 'name')) !== revisionName(profile)) return undefined;
  const revision = (obj as JsonObject)['revision'];
  const annotations = metadata && objectMember(metadata, 'annotations');
  const replacedAt = Date.parse((annotations && stringMember(annotations, REPLACED_AT_ANNOTATION)) ?? '');
  return {
    name: revisionName(profile),
    profile,
    hash: profileHash(profile),
    revision: typeof revision === 'number' ? revision : 0,
    ...(Number.isNaN(replacedAt) ? {} : { replacedAt }),
  };
}
