import type { AgentProfile, PolicyRule } from '@outrigger/agent-profiles';
import type { RevokedSubjects, SaSubject } from '../desired/subjects.js';

/** A ClusterRole as the syncer's watch of every ClusterRole shows it. */
export interface ObservedRole {
  readonly name: string;
  /** The profile label when the role carries Outrigger's managed-by label; undefined when it is not Outrigger's. */
  readonly ownedBy: string | undefined;
  readonly rules: readonly PolicyRule[];
}

/** A binding's identity: kind, name and (RoleBinding) namespace, as a tuple, never parsed back. */
export function bindingId(b: { readonly kind: string; readonly name: string; readonly namespace: string | undefined }): string {
  return JSON.stringify([b.kind, b.kind === 'RoleBinding' ? b.namespace : undefined, b.name]);
}

/** One of the syncer's own bindings (found by its labels) as its watch shows it. */
export interface ObservedBinding {
  readonly kind: 'ClusterRoleBinding' | 'RoleBinding';
  readonly name: string;
  /** A RoleBinding's namespace; for a ClusterRoleBinding, the namespace its label says it holds (undefined: a single binding of an earlier version). */
  readonly namespace: string | undefined;
  readonly roleRef: string;
  /** The version the watch shows: a write or delete planned from it is refused if the binding has changed since. */
  readonly resourceVersion: string;
  /** ServiceAccount subjects, sorted; anything else an admin edited in is dropped on the next write. */
  readonly subjects: readonly SaSubject[];
  /** Subjects that are not ServiceAccounts, or out of order or duplicated: the object needs a write even if the set is right. */
  readonly untidy: boolean;
  /** ServiceAccounts removed from it a moment ago, which the exec guard still judges, each until its `untilMs` (its revoked annotations). */
  readonly revoked?: RevokedSubjects;
}


/**
 * Everything one profile's plan depends on, read from the stores at one moment: typed, complete,
 * and nothing else (no client, no clock but `nowMs`). To plan one namespace, the same with only
 * that namespace's bindings (and those of earlier versions, which hold several), live
 * ServiceAccounts, label verdict and memory.
 */
export interface ObservedProfile {
  readonly name: string;
  /** The generation in force with its RBAC whose permissions the syncer holds; undefined while none (deleted, not accepted, missing permissions). */
  readonly profile: AgentProfile | undefined;
  /** The ClusterRole the profile names, as watched (undefined: it does not exist). */
  readonly role: ObservedRole | undefined;
  /** Every binding labelled for this profile, of any shape (earlier names and kinds included). */
  readonly bindings: readonly ObservedBinding[];
  /** ServiceAccounts with a live pod that carries this profile's agent exactly as injected, by namespace. */
  readonly live: ReadonlyMap<string, readonly string[]>;
  /** ServiceAccounts with a pod (live or going) in which other containers can reach this profile's agent's token, by namespace: never bound. */
  readonly sharing: ReadonlyMap<string, readonly string[]>;
  readonly labelledNamespaces: ReadonlySet<string>;
  readonly protectedNamespaces: readonly string[];
  /** false while the pod or namespace view may be missing objects. */
  readonly viewComplete: boolean;
  /** Why the exec guard of the profile's kind of binding is not in force; undefined when it is (or no binding is wanted). */
  readonly execGuardProblem: string | undefined;
  /** The planner's memory, handed back, per namespace: subjectKey → epoch ms since which a bound subject has had no live pod. */
  readonly goneSince: ReadonlyMap<string, ReadonlyMap<string, number>>;
  readonly nowMs: number;
  readonly graceMs: number;
  /** How long a ServiceAccount removed from a binding stays listed on it as revoked, for the exec guard. */
  readonly revokedKeepMs: number;
  /** At most this many ServiceAccounts are bound per namespace and profile. */
  readonly maxPerNamespace: number;
}
