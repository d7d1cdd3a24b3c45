/** What the last plan of one namespace of a profile left. */
export interface NamespaceState {
  /** The planner's memory: since when each bound subject has had no live pod. */
  readonly goneSince: ReadonlyMap<string, number>;
  readonly subjects: number;
  /** How many ServiceAccounts with agents the namespace has, when over the cap. */
  readonly overCap: number | undefined;
  /** Objects its plan would have created that exist and are not ours. */
  readonly notOurs: readonly string[];
}

/** What one namespace's plan changed of its profile's status. */
export type StatusChange = 'conditions' | 'subjects' | 'nothing';

/** What a profile's status sums up over its namespaces. */
export interface ProfileTally {
  readonly subjects: number;
  readonly overCap: ReadonlyMap<string, number>;
  readonly notOurs: readonly string[];
}

/**
 * Per profile and namespace, what the last plan left: the planner's memory, handed back to the
 * next plan of that namespace, and what the profile's status sums. A profile is known once it was
 * planned as a whole; until then its namespaces are not planned alone. The sums are kept as the
 * namespaces change: every namespace's reconcile reads them, and summing them each time would be
 * quadratic in the namespaces.
 */
export class NamespaceStates {
  private readonly byProfile = new Map<string, ProfileStates>();

  has(profile: string): boolean {
    return this.byProfile.has(profile);
  }

  /** After a whole-profile plan: every namespace's state at once. */
  replace(profile: string, states: ReadonlyMap<string, NamespaceState>): void {
    const fresh = new ProfileStates();
    for (const [namespace, state] of states) fresh.set(namespace, state);
    this.byProfile.set(profile, fresh);
  }

  /** After one namespace's plan; what changed of what the status sums: its conditions (over the cap, not ours), else only the subjects bound, or nothing. */
  set(profile: string, namespace: string, state: NamespaceState): StatusChange {
    let states = this.byProfile.get(profile);
    if (!states) this.byProfile.set(profile, (states = new ProfileStates()));
    const before = states.set(namespace, state);
    if (before.overCap !== state.overCap || before.notOurs.join('\n') !== state.notOurs.join('\n')) return 'conditions';
    return before.subjects !== state.subjects ? 'subjects' : 'nothing';
  }

  /** The planner's memory for one namespace, or (none given) for every namespace of the profile. */
  goneSince(profile: string, namespace?: string): Map<string, ReadonlyMap<string, number>> {
    const states = this.byProfile.get(profile);
    if (!states) return new Map();
    if (namespace !== undefined) {
      const memory = states.get(namespace).goneSince;
      return memory.size > 0 ? new Map([[namespace, memory]]) : new Map();
    }
    return new Map([...states.goneSince]);
  }

  /** The subjects bound over the profile's namespaces, without the copies a tally makes. */
  subjects(profile: string): number {
    return this.byProfile.get(profile)?.subjects ?? 0;
  }

  tally(profile: string): ProfileTally {
    const states = this.byProfile.get(profile);
    if (!states) return { subjects: 0, overCap: new Map(), notOurs: [] };
    return { subjects: states.subjects, overCap: new Map(states.overCap), notOurs: [...states.notOurs.values()].flat() };
  }

  /** A new leader plans every profile as a whole first. */
  clear(): void {
    this.byProfile.clear();
  }
}

/** One profile's namespaces (only those not empty), with the sums and memories kept up to date. */
class ProfileStates {
  private readonly byNamespace = new Map<string, NamespaceState>();
  subjects = 0;
  readonly overCap = new Map<string, number>();
  readonly notOurs = new Map<string, readonly string[]>();
  readonly goneSince = new Map<string, ReadonlyMap<string, number>>();

  get(namespace: string): NamespaceState {
    return this.byNamespace.get(namespace) ?? EMPTY;
  }

  /** Stores `state` for `namespace` and returns what was there. */
  set(namespace: string, state: NamespaceState): NamespaceState {
    const before = this.get(namespace);
    this.subjects += state.subjects - before.subjects;
    keep(this.overCap, namespace, state.overCap);
    keep(this.notOurs, namespace, state.notOurs.length > 0 ? state.notOurs : undefined);
    keep(this.goneSince, namespace, state.goneSince.size > 0 ? state.goneSince : undefined);
    if (isEmpty(state)) this.byNamespace.delete(namespace);
    else this.byNamespace.set(namespace, state);
    return before;
  }
}

function keep<V>(map: Map<string, V>, key: string, value: V | undefined): void {
  if (value === undefined) map.delete(key);
  else map.set(key, value);
}

const EMPTY: NamespaceState = { goneSince: new Map(), subjects: 0, overCap: undefined, notOurs: [] };

function isEmpty(state: NamespaceState): boolean {
  return state.subjects === 0 && state.overCap === undefined && state.notOurs.length === 0 && state.goneSince.size === 0;
}
