import { isJsonObject, type JsonObject, objectMember, stringMember } from '@outrigger/admission';
import { type AgentProfile, agentProfileSchema, MANAGED_BY_LABEL, MANAGED_BY_VALUE, PROFILE_LABEL, profileHash } from '@outrigger/agent-profiles';

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

/** The stored revision of a profile name and spec hash, if any. */
export type StoredRevision = (profile: string, hash: string) => AgentRevision | undefined;

/** The rbac-syncer's setting (and its default) for how long after a spec is replaced the injector may still inject it: it has not seen the edit yet. */
export const SPEC_CHANGE_LAG = { setting: 'SPEC_CHANGE_LAG', fallback: '5m' } as const;

/**
 * Whether a pod created at `createdMs` can have been injected from this earlier spec: only while it
 * was in force, and for `lagMs` after. Otherwise its agent was written by whoever created the pod
 * while the webhook was not called (`failurePolicy: Ignore`), perhaps to get a spec an admin has
 * since tightened. An unknown creation time (NaN) is never within.
 */
export function injectableWhenCreated(revision: AgentRevision, createdMs: number, lagMs: number): boolean {
  return revision.replacedAt === undefined || createdMs <= revision.replacedAt + lagMs;
}

/** The earlier specs the injector can have injected into a pod created at `createdMs`: what the rbac-syncer binds and the CLI calls verified. */
export function specsWhenCreated(revisions: StoredRevision, createdMs: number, lagMs: number): RevisionLookup {
  return (profile, hash) => {
    const revision = revisions(profile, hash);
    return revision && injectableWhenCreated(revision, createdMs, lagMs) ? revision.profile : undefined;
  };
}

/** A pod's metadata.creationTimestamp (set by the API server) in ms; NaN when absent or unreadable. */
export function podCreatedMs(pod: JsonObject): number {
  const metadata = objectMember(pod, 'metadata');
  const created = metadata && stringMember(metadata, 'creationTimestamp');
  return created === undefined ? Number.NaN : Date.parse(created);
}

export function revisionName(profile: AgentProfile): string {
  return agentRevisionName(profile.name, profileHash(profile));
}

/** The name of the revision that holds profile `profile`'s spec with this hash. */
export function agentRevisionName(profile: string, hash: string): string {
  return `${profile}-${hash}`;
}

/** A profile spec as the rbac-syncer stores it (a type, not an interface: it is written as any API object). */
export type AgentRevisionObject = {
  readonly apiVersion: 'apps/v1';
  readonly kind: 'ControllerRevision';
  readonly metadata: { readonly name: string; readonly namespace: string; readonly labels: Readonly<Record<string, string>> };
  readonly data: { readonly spec: AgentProfile };
  readonly revision: number;
};

/** Its ControllerRevision (in the syncer's namespace): named after profile and hash, so writing it twice is harmless. */
export function revisionObject(profile: AgentProfile, revision: number, namespace: string): AgentRevisionObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'ControllerRevision',
    metadata: { name: revisionName(profile), namespace, labels: { [MANAGED_BY_LABEL]: MANAGED_BY_VALUE, [PROFILE_LABEL]: profile.name } },
    data: { spec: profile },
    revision,
  };
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
