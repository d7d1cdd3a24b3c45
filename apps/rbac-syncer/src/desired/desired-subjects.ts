import { normalizeSubjects, subjectKey, type SaSubject } from './subjects.js';

export interface DesiredSubjectsInput {
  /** The profile whose binding this is. */
  readonly profile: string;
  /** The ServiceAccounts with a live (not deleting) pod carrying this profile's agent, in any namespace; see liveByNamespace. */
  readonly live: Iterable<SaSubject>;
  /** subjectKeys of ServiceAccounts with a pod in which other containers can reach the agent's token or volumes: never bound. */
  readonly sharing: ReadonlySet<string>;
  /** Namespaces carrying outrigger.dev/injection=enabled. */
  readonly labelledNamespaces: ReadonlySet<string>;
  /** Never bound, whatever their labels say (kube-system, …, the syncer's own namespace). */
  readonly protectedNamespaces: readonly string[];
  /** The subjects bound now (what is stored). */
  readonly current: readonly SaSubject[];
  /** subjectKey → epoch ms since which a bound subject has had no live opted-in pod. */
  readonly goneSince: ReadonlyMap<string, number>;
  readonly nowMs: number;
  readonly graceMs: number;
  /** false while the pod or namespace view may be missing objects (before/after a failed relist). */
  readonly viewComplete: boolean;
}

export interface DesiredSubjects {
  /** Sorted, deduplicated. */
  readonly subjects: SaSubject[];
  /** The new "gone since" memory for this profile. */
  readonly goneSince: Map<string, number>;
  /** When to look again to drop a subject whose grace runs out (epoch ms), if any. */
  readonly wakeAtMs?: number;
  /** Why each removed subject goes (for events and logs), by subjectKey. */
  readonly removedBecause: Map<string, string>;
}

/**
 * The subjects a profile's binding should have. Level-based and pure: the same inputs give the
 * same answer whatever order the pods come in.
 * - A subject is wanted while a live (not deleting) pod of that ServiceAccount opted into the
 *   profile in an allowed namespace (labelled, not protected), unless a pod of it shares the
 *   agent's token: such a subject goes at once, whatever its other pods (its token is out).
 * - A bound subject without such a pod stays for `graceMs` after it was first seen without one,
 *   so rollouts do not flap; a subject whose namespace lost its label or is protected goes at once.
 * - While the view is incomplete nothing is removed (absence proves nothing) and no clock starts.
 */
export function desiredSubjects(input: DesiredSubjectsInput): DesiredSubjects {
  const blocked = new Set(input.protectedNamespaces);
  const allowed = (ns: string) => input.labelledNamespaces.has(ns) && !blocked.has(ns);
  const live = new Map<string, SaSubject>();
  for (const subject of input.live) if (allowed(subject.namespace) && !input.sharing.has(subjectKey(subject))) live.set(subjectKey(subject), subject);

  const goneSince = new Map<string, number>();
  const removedBecause = new Map<string, string>();
  const kept: SaSubject[] = [];
  let wakeAtMs: number | undefined;
  for (const subject of input.current) {
    const key = subjectKey(subject);
    if (live.has(key)) continue;
    // Seen, not inferred from an absence: true even while the view is incomplete.
    if (input.sharing.has(key)) {
      removedBecause.set(key, "a pod of it lets other containers reach the agent's token or volumes (an ephemeral container added to it, say)");
      continue;
    }
    if (!input.viewComplete) {
      kept.push(subject);
      const since = input.goneSince.get(key);
      if (since !== undefined) goneSince.set(key, since);
      continue;
    }
    if (!allowed(subject.namespace)) {
      removedBecause.set(key, blocked.has(subject.namespace) ? 'namespace is protected' : 'namespace is not labelled for injection');
      continue;
    }
    const since = Math.min(input.goneSince.get(key) ?? input.nowMs, input.nowMs);
    if (input.nowMs - since >= input.graceMs) {
      removedBecause.set(key, `no live opted-in pod for ${Math.round((input.nowMs - since) / 1000)}s (grace ${Math.round(input.graceMs / 1000)}s)`);
      // Remembered while any binding still holds it (one of an earlier version goes only with the
      // whole profile's plan), so its grace never starts over.
      goneSince.set(key, since);
      continue;
    }
    kept.push(subject);
    goneSince.set(key, since);
    wakeAtMs = Math.min(wakeAtMs ?? Infinity, since + input.graceMs);
  }
  return { subjects: normalizeSubjects([...live.values(), ...kept]), goneSince, wakeAtMs, removedBecause };
}
