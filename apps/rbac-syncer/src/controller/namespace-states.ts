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

/** What a profile's status sums up over its namespaces. */
export interface ProfileTally {
  readonly subjects: number;
  readonly overCap: ReadonlyMap<string, number>;
  readonly notOurs: readonly string[];
}

/**
 * Per profile and namespace, what the last plan left: the planner's memory, handed back to the
 * next plan of that namespace, and what the profile's status sums. A profile is known once it was
 * planned as a whole; until then its namespaces are not planned alone.
 */
export class NamespaceStates {
  private readonly byProfile = new Map<string, Map<string, NamespaceState>>();

  has(profile: string): boolean {
    return this.byProfile.has(profile);
  }

  /** After a whole-profile plan: every namespace's state at once. */
  replace(profile: string, states: ReadonlyMap<string, NamespaceState>): void {
    this.byProfile.set(profile, new Map([...states].filter(([, state]) => !isEmpty(state))));
  }

  /** After one namespace's plan; true when what the status sums (bound, over the cap, not ours) changed. */
  set(profile: string, namespace: string, state: NamespaceState): boolean {
    const states = this.byProfile.get(profile) ?? new Map<string, NamespaceState>();
    const before = states.get(namespace) ?? EMPTY;
    if (isEmpty(state)) states.delete(namespace);
    else states.set(namespace, state);
    this.byProfile.set(profile, states);
    return before.subjects !== state.subjects || before.overCap !== state.overCap || before.notOurs.join('\n') !== state.notOurs.join('\n');
  }

  /** The planner's memory for one namespace, or (none given) for every namespace of the profile. */
  goneSince(profile: string, namespace?: string): Map<string, ReadonlyMap<string, number>> {
    const states = this.byProfile.get(profile);
    const picked = namespace === undefined ? [...(states ?? [])] : [[namespace, states?.get(namespace)] as const];
    return new Map(picked.flatMap(([ns, state]) => (state && state.goneSince.size > 0 ? [[ns, state.goneSince] as const] : [])));
  }

  tally(profile: string): ProfileTally {
    const states = [...(this.byProfile.get(profile)?.entries() ?? [])];
    return {
      subjects: states.reduce((n, [, state]) => n + state.subjects, 0),
      overCap: new Map(states.flatMap(([ns, state]) => (state.overCap === undefined ? [] : [[ns, state.overCap] as const]))),
      notOurs: states.flatMap(([, state]) => state.notOurs),
    };
  }

  /** A new leader plans every profile as a whole first. */
  clear(): void {
    this.byProfile.clear();
  }
}

const EMPTY: NamespaceState = { goneSince: new Map(), subjects: 0, overCap: undefined, notOurs: [] };

function isEmpty(state: NamespaceState): boolean {
  return state.subjects === 0 && state.overCap === undefined && state.notOurs.length === 0 && state.goneSince.size === 0;
}
