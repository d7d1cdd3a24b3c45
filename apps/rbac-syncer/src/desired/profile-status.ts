import { type AgentProfile, agentPodSecurityLevel, type PodSecurityLevel, type ProfileVerdict } from '@outrigger/agent-profiles';
import { INSTALL_NAMES } from '@outrigger/install';
import { agentRevisionName } from '@outrigger/sidecar';
import type { AgentCounts } from './agent-counts.js';
import type { ProfileRbac } from './rbac-objects.js';

/** A metav1.Condition as stored on an AgentProfile. */
export interface StoredCondition {
  readonly type: string;
  readonly status: 'True' | 'False' | 'Unknown';
  readonly reason: string;
  readonly message: string;
  readonly lastTransitionTime: string;
  readonly observedGeneration?: number;
}

/** What the syncer writes to an AgentProfile's status subresource. */
export interface ProfileStatus {
  /** The latest generation the controllers have judged. */
  readonly observedGeneration: number;
  readonly conditions: readonly StoredCondition[];
  /** ServiceAccounts bound for this profile. */
  readonly boundSubjects: number;
  /** The strictest Pod Security Standard the agent of the generation in force meets. */
  readonly agentPodSecurity?: PodSecurityLevel;
  /** Live opted-in pods by the agent they run (while a generation is in force). */
  readonly agents?: AgentsStatus;
  /** The namespaces the profile applies in: labelled for injection and picked by its namespaceSelector. */
  readonly namespaces?: number;
}

export interface AgentsStatus {
  readonly current: number;
  readonly outdated: number;
  readonly missing: number;
  /** Only while the profile stages a change: of the current pods, those running its agent. */
  readonly canary?: number;
  readonly outdatedRevisions: readonly { readonly revision: string; readonly pods: number }[];
}

/** How many outdated revisions the status lists (the CRD's maxItems). */
const REVISIONS_LISTED = 16;

export interface ProfileStatusInput {
  readonly verdict: ProfileVerdict;
  /** The conditions the object carries now, so an unchanged condition keeps its transition time. */
  readonly stored: readonly StoredCondition[];
  /** The RBAC of the generation in force, if any. */
  readonly rbac: ProfileRbac | undefined;
  /** Permissions the syncer lacks for it (undefined: not checked yet). */
  readonly missingPermissions: readonly string[] | undefined;
  readonly execGuardProblem: string | undefined;
  /** The API server's answer to the last reconcile's failed request; undefined once one succeeds. */
  readonly writeFailure?: string;
  /** The ClusterRole the profile names exists and is not Outrigger's for it: nothing is bound. */
  readonly foreignRole?: boolean;
  /** Objects the syncer would create that exist and are not Outrigger's. */
  readonly notOurs?: readonly string[];
  /** Namespaces with more ServiceAccounts than the cap (and how many), and the cap. */
  readonly overCap?: ReadonlyMap<string, number>;
  readonly maxPerNamespace?: number;
  readonly subjects: number;
  /** The profile in force (for the level its agent meets). */
  readonly profile?: AgentProfile;
  readonly agents?: AgentCounts;
  readonly namespaces?: number;
  readonly now: Date;
}

/**
 * The status of one AgentProfile: `Accepted` says whether its latest generation is valid (and what
 * stays in force when not); `Synced` whether the RBAC of the generation in force is in place.
 * Both services judge a profile with the same code, so the injector uses what `Accepted` says.
 */
export function profileStatus(input: ProfileStatusInput): ProfileStatus {
  const { verdict } = input;
  const accepted = condition(input, 'Accepted', verdict.accepted ? 'True' : 'False', verdict.reason, verdict.message, verdict.generation);
  const [status, reason, message] = synced(input);
  return {
    observedGeneration: verdict.generation,
    conditions: [accepted, condition(input, 'Synced', status, reason, message, verdict.inForceGeneration ?? verdict.generation)],
    boundSubjects: input.subjects,
    ...(input.profile ? { agentPodSecurity: agentPodSecurityLevel(input.profile) } : {}),
    ...(input.profile && input.agents ? { agents: agentsStatus(input.profile.name, input.agents, input.profile.canary !== undefined) } : {}),
    ...(input.profile && input.namespaces !== undefined ? { namespaces: input.namespaces } : {}),
  };
}

function agentsStatus(profile: string, counts: AgentCounts, staged: boolean): AgentsStatus {
  const outdatedRevisions = [...counts.outdatedByHash]
    .map(([hash, pods]) => ({ revision: hash === '' ? 'unknown' : agentRevisionName(profile, hash), pods }))
    .sort((a, b) => b.pods - a.pods || (a.revision < b.revision ? -1 : 1))
    .slice(0, REVISIONS_LISTED);
  return { current: counts.current, outdated: counts.outdated, missing: counts.missing, ...(staged ? { canary: counts.canary } : {}), outdatedRevisions };
}

/**
 * Whether two statuses differ in nothing but counts: of agents, bound ServiceAccounts, namespaces.
 * Pod churn moves those all the time, so they are written at most every so often.
 */
export function onlyCountsDiffer(a: ProfileStatus, b: ProfileStatus): boolean {
  const withoutCounts = (s: ProfileStatus) => ({ ...s, agents: undefined, boundSubjects: 0, namespaces: undefined });
  return !sameStatus(a, b) && sameStatus(withoutCounts(a), withoutCounts(b));
}

function synced(input: ProfileStatusInput): [StoredCondition['status'], string, string] {
  const { verdict, rbac } = input;
  if (verdict.inForceGeneration === undefined) return ['False', 'NotInForce', 'no generation of this profile is in force'];
  if (!rbac) return ['True', 'NoRbac', 'the profile grants no RBAC'];
  // Before permissions: granting the syncer rights on a role that is not Outrigger's would be the wrong fix.
  if (input.foreignRole) {
    return ['False', 'ForeignClusterRole', `ClusterRole ${rbac.clusterRole} exists and is not managed by Outrigger for this profile: nothing is bound to it. A profile binds only the ClusterRole the rbac-syncer creates with exactly spec.rbac.rules; name one that does not exist yet in spec.rbac.clusterRole`];
  }
  if (input.missingPermissions === undefined) return ['Unknown', 'Pending', 'checking the rbac-syncer\'s permissions for this profile'];
  if (input.missingPermissions.length > 0) {
    return [
      'False',
      'MissingPermissions',
      `the rbac-syncer lacks ${input.missingPermissions.join(', ')}: add them to ClusterRole ${INSTALL_NAMES.rbacSyncer} in the overlay you installed from (as deploy/overlays/local adds xxl-agent-native-exec) and apply that overlay, never deploy/base/rbac-syncer over it; with Helm, grant them in a ClusterRole of your own bound to ServiceAccount ${INSTALL_NAMES.rbacSyncer}`,
    ];
  }
  const binding = `${rbac.binding.kind} ${rbac.binding.name}`;
  if (input.writeFailure !== undefined) return ['False', 'WriteFailed', `${binding} not in sync, retrying: ${input.writeFailure}`];
  if (input.execGuardProblem !== undefined) return ['False', 'ExecGuardMissing', `${binding} bindings emptied: ${input.execGuardProblem}`];
  if (input.notOurs?.length) return ['False', 'NameTaken', `left alone, not Outrigger's: ${input.notOurs.join(', ')}; find out whose they are and what they grant, then delete them, or give spec.rbac.binding another name, to let the rbac-syncer create its own`];
  const where = rbac.binding.kind === 'RoleBinding' ? `${binding} (one per namespace)` : `ClusterRoleBinding ${rbac.binding.name}.<namespace> (one per namespace)`;
  // The number is status.boundSubjects, a count written at most every so often: not in the message.
  const bound = `${where} binds the ServiceAccounts of live agents to ClusterRole ${rbac.clusterRole}`;
  if (input.overCap?.size) {
    const over = [...input.overCap].sort(([a], [b]) => (a < b ? -1 : 1)).slice(0, 5).map(([ns, n]) => `${ns} (${n})`);
    const more = input.overCap.size > 5 ? ` and ${input.overCap.size - 5} more` : '';
    return ['False', 'NamespaceOverCap', `${bound}; namespaces over the cap of ${input.maxPerNamespace} ServiceAccounts each keep their first ${input.maxPerNamespace} bound and no more: ${over.join(', ')}${more}`];
  }
  return ['True', 'Synced', bound];
}

function condition(input: ProfileStatusInput, type: string, status: StoredCondition['status'], reason: string, message: string, observedGeneration: number): StoredCondition {
  const before = input.stored.find((c) => c.type === type);
  const lastTransitionTime = before && before.status === status ? before.lastTransitionTime : input.now.toISOString().replace(/\.\d+Z$/, 'Z');
  return { type, status, reason, message, lastTransitionTime, observedGeneration };
}

export function sameStatus(a: ProfileStatus, b: ProfileStatus): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}
