import type { ProfileVerdict } from '@outrigger/agent-profiles';
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
}

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
  readonly subjects: number;
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
  };
}

function synced(input: ProfileStatusInput): [StoredCondition['status'], string, string] {
  const { verdict, rbac } = input;
  if (verdict.inForceGeneration === undefined) return ['False', 'NotInForce', 'no generation of this profile is in force'];
  if (!rbac) return ['True', 'NoRbac', 'the profile grants no RBAC'];
  if (input.missingPermissions === undefined) return ['Unknown', 'Pending', 'checking the rbac-syncer\'s permissions for this profile'];
  if (input.missingPermissions.length > 0) {
    return ['False', 'MissingPermissions', `the rbac-syncer lacks ${input.missingPermissions.join(', ')}: grant them by name as in deploy/base/rbac-syncer/rbac.yaml`];
  }
  const binding = `${rbac.binding.kind} ${rbac.binding.name}`;
  if (input.writeFailure !== undefined) return ['False', 'WriteFailed', `${binding} not in sync, retrying: ${withRemedy(rbac, input.writeFailure)}`];
  if (input.execGuardProblem !== undefined) return ['False', 'ExecGuardMissing', `${binding} kept empty: ${input.execGuardProblem}`];
  const where = rbac.binding.kind === 'RoleBinding' ? ' (one per namespace)' : '';
  return ['True', 'Synced', `${binding}${where} binds ${input.subjects} ServiceAccount(s) to ClusterRole ${rbac.clusterRole}`];
}

// etcd's request limit (1.5 MiB by default) and the API server's body limit (3 MiB).
const TOO_LARGE = /request is too large|request entity too large/i;

/** A binding grown past what the API server stores needs another shape, not a retry: say which. */
function withRemedy(rbac: ProfileRbac, failure: string): string {
  if (!TOO_LARGE.test(failure) || rbac.binding.kind !== 'ClusterRoleBinding') return failure;
  return `${failure} (one ClusterRoleBinding cannot hold this many ServiceAccounts: set the profile's spec.rbac.binding.kind to RoleBinding, one per namespace)`;
}

function condition(input: ProfileStatusInput, type: string, status: StoredCondition['status'], reason: string, message: string, observedGeneration: number): StoredCondition {
  const before = input.stored.find((c) => c.type === type);
  const lastTransitionTime = before && before.status === status ? before.lastTransitionTime : input.now.toISOString().replace(/\.\d+Z$/, 'Z');
  return { type, status, reason, message, lastTransitionTime, observedGeneration };
}

export function sameStatus(a: ProfileStatus, b: ProfileStatus): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}
