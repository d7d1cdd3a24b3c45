import { isDeepStrictEqual } from 'node:util';
import { namespacesDigest, type NamespacesHeld } from '@outrigger/admission';
import { type AgentProfile, type AgentProfileEntry, profileAppliesIn, type RbacBindingKind } from '@outrigger/agent-profiles';
import type { Reflector } from '@outrigger/kube';
import { agentRevisionName, type AgentRevision } from '@outrigger/sidecar';
import { agentCounts, type AgentCounts, type AgentCountValue } from '../desired/agent-counts.js';
import { execGuardProblem, type GuardBindingView, type GuardPolicyView } from '@outrigger/install';
import { liveByNamespace } from '../desired/live-subjects.js';
import type { PodView } from '../desired/pod-view.js';
import type { StoredCondition } from '../desired/profile-status.js';
import type { ObservedBinding, ObservedRole } from '../plan/observed-profile.js';
import { BINDING_OWNERS, bindingGroup, type OwnBinding } from './rbac-watches.js';

/** A labelled namespace as the syncer keeps it: where a scoped profile applies depends on its labels. */
export interface NamespaceView {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  /** Only for the digest `outrigger check` compares (heldNamespaces()); a change of it alone wakes nothing. */
  readonly resourceVersion: string;
}

/** Namespace projections that differ in their resourceVersion alone: nothing the syncer plans from changed. */
export function sameNamespace(a: NamespaceView, b: NamespaceView): boolean {
  return a.name === b.name && isDeepStrictEqual(a.labels, b.labels);
}

/** An AgentProfile as the syncer keeps it: the verdict on its spec and the conditions it carries. */
export interface ProfileObjectView {
  readonly entry: AgentProfileEntry;
  readonly conditions: readonly StoredCondition[];
}

/** The exec guard of one kind of binding: its policy and its binding, each watched by name. */
export interface GuardWatches {
  readonly name: string;
  readonly policy: Reflector<GuardPolicyView>;
  readonly binding: Reflector<GuardBindingView>;
}

/** The stores the controller declares first; the others join as profiles come to need them. */
export interface BaseStores {
  readonly namespaces: Reflector<NamespaceView>;
  readonly roles: Reflector<ObservedRole>;
  /** The agent revisions stored (ControllerRevisions): the specs earlier pods were injected from. */
  readonly revisions: Reflector<AgentRevision>;
  /** Where the agent revisions live (the syncer's own namespace). */
  readonly revisionNamespace: string;
  /** Namespaces nothing is ever bound in. */
  readonly protectedNamespaces: readonly string[];
}

/**
 * What the syncer's watches hold, and every question the reconciler asks of them: the "observe"
 * of observe → plan → execute, read from the stores at the moment it is asked.
 */
export class SyncerView {
  /** Declared once the agent revisions are listed. */
  pods: Reflector<PodView, AgentCountValue> | undefined;
  /** Only when profiles come from the API. */
  profileObjects: Reflector<ProfileObjectView> | undefined;
  /** Our ClusterRoleBindings first; our RoleBindings once a profile binds that way. */
  readonly bindings: Reflector<OwnBinding>[] = [];
  /** The guard of each kind of binding, once a profile binds that way. */
  readonly guards = new Map<RbacBindingKind, GuardWatches>();
  /** Per profile name ('' for any profile): the namespaces it applies in, until namespaces or profiles change. */
  private readonly applying = new Map<string, Set<string>>();
  private incompleteSince: number | undefined = Date.now();

  constructor(private readonly stores: BaseStores) {}

  /** How many labelled namespaces are held and their digest, which `outrigger check` compares with the API server's (the leader's, from its Lease). */
  heldNamespaces(): NamespacesHeld {
    const entries = this.stores.namespaces.entries();
    return { held: entries.length, digest: namespacesDigest(entries.map(([, { name, resourceVersion }]) => ({ name, resourceVersion }))) };
  }

  get protectedNamespaces(): readonly string[] {
    return this.stores.protectedNamespaces;
  }

  /** Every store a plan reads has listed once. */
  listed(): boolean {
    return [this.pods, this.stores.namespaces, this.stores.roles, this.bindings[0], this.stores.revisions].every((r) => r?.status().hasSynced === true);
  }

  /** Namespaces or profiles changed: where each profile applies is worked out again. */
  forgetScopes(): void {
    this.applying.clear();
  }

  /** The namespaces a profile applies in: labelled for injection, not protected, and picked by its namespaceSelector. */
  namespacesOf(profile: AgentProfile | undefined): Set<string> {
    const cached = this.applying.get(profile?.name ?? '');
    if (cached) return cached;
    const namespaces = new Set(this.stores.namespaces.entries().flatMap(([, namespace]) => (this.appliesIn(profile, namespace.name) ? [namespace.name] : [])));
    this.applying.set(profile?.name ?? '', namespaces);
    return namespaces;
  }

  /** The same for one namespace. */
  appliesIn(profile: AgentProfile | undefined, namespace: string): boolean {
    const view = this.stores.namespaces.get(namespace);
    return view !== undefined && !this.stores.protectedNamespaces.includes(namespace) && (!profile || profileAppliesIn(profile, view.labels));
  }

  /** One profile's live opted-in pods by the agent they run, in the namespaces it applies in. */
  agentCounts(profile: AgentProfile): AgentCounts {
    const taking = this.namespacesOf(profile);
    return agentCounts((group) => this.pods?.indexValues(group) ?? [], profile.name, (namespace) => taking.has(namespace));
  }

  /** Per namespace given, the ServiceAccounts with live pods carrying profile `name`'s agent (`sharing`: with a pod that shares its token). */
  live(name: string, namespaces: ReadonlySet<string>, group: 'live' | 'sharing' = 'live'): Map<string, string[]> {
    const pods = this.pods;
    return pods ? liveByNamespace((key) => pods.indexKeys(key), name, namespaces, group) : new Map();
  }

  role(name: string): ObservedRole | undefined {
    return this.stores.roles.get(name);
  }

  /** The profiles our bindings serve (some may be gone: their bindings are to be emptied). */
  bindingOwners(): string[] {
    return this.bindings.flatMap((store) => [...store.indexKeys(BINDING_OWNERS)]);
  }

  /** Profile `name`'s bindings: all of them, or those of one namespace with those of earlier versions (which hold several). */
  bindingsOf(name: string, namespace?: string): ObservedBinding[] {
    if (namespace === undefined) return this.bindings.flatMap((store) => store.entries().flatMap(([, b]) => (b.profile === name ? [b.binding] : [])));
    return [namespace, undefined].flatMap((ns) => this.bindings.flatMap((store) => [...store.indexKeys(bindingGroup(name, ns))].flatMap((k) => store.get(k)?.binding ?? [])));
  }

  /** How many bindings of earlier versions (one for several namespaces) the profile has. */
  legacyBindings(name: string): number {
    return this.bindings.reduce((n, store) => n + [...store.indexKeys(bindingGroup(name, undefined))].length, 0);
  }

  /** The agent revisions stored for profile `name`. */
  revisionsOf(name: string): AgentRevision[] {
    return this.stores.revisions.entries().flatMap(([, r]) => (r.profile.name === name ? [r] : []));
  }

  /** The stored revision of `profile` whose spec has `hash`, if any: what pods injected from it were rendered from, and when it was replaced. */
  revision(profile: string, hash: string): AgentRevision | undefined {
    const stored = this.stores.revisions.get(`${this.stores.revisionNamespace}/${agentRevisionName(profile, hash)}`);
    // Names join profile and hash: profile `a` with hash `b-<hash>` would name profile `a-b`'s revision.
    return stored?.profile.name === profile && stored.hash === hash ? stored : undefined;
  }

  /** The conditions AgentProfile `name` carries; undefined when there is no such object (profiles from a file). */
  storedConditions(name: string): readonly StoredCondition[] | undefined {
    return this.profileObjects?.get(name)?.conditions;
  }

  /** Whether the guard of a kind of binding is known: both its watches have listed. */
  guardKnown(kind: RbacBindingKind): boolean {
    const guard = this.guards.get(kind);
    return guard !== undefined && guard.policy.status().hasSynced && guard.binding.status().hasSynced;
  }

  /** Undefined when no profile binds by `kind` or its guard is in force; unknown until both watches listed. */
  execGuardProblem(kind: RbacBindingKind | undefined): string | undefined {
    const guard = kind && this.guards.get(kind);
    if (!kind || !guard) return undefined;
    if (!this.guardKnown(kind)) return 'exec guard not known yet (its watches have not listed)';
    return execGuardProblem(kind, guard.name, guard.policy.get(guard.name), guard.binding.get(guard.name));
  }

  /** The problems of the guards of `kinds`, together; undefined when all are in force. */
  execGuardProblems(kinds: Iterable<RbacBindingKind>): string | undefined {
    const problems = [...kinds].flatMap((kind) => this.execGuardProblem(kind) ?? []);
    return problems.length > 0 ? problems.join('; ') : undefined;
  }

  /** Pods and namespaces are both fully known (no watch is relisting after a gap). */
  viewComplete(): boolean {
    const complete = [this.pods, this.stores.namespaces].every((r) => r?.status().viewComplete === true);
    if (complete) this.incompleteSince = undefined;
    else this.incompleteSince ??= Date.now();
    return complete;
  }

  /** How long the view has been incomplete, as of the last viewComplete() (0 while complete). */
  incompleteForMs(): number {
    return this.incompleteSince === undefined ? 0 : Date.now() - this.incompleteSince;
  }
}
