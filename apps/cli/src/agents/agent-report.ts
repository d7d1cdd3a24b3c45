import type { AgentState, AgentStateName } from '@outrigger/sidecar';
import { type WorkloadRef, workloadKey } from './workload-owner.js';

/** What one workload's pods run of one profile: counts, never the pods themselves. */
export interface WorkloadAgents {
  readonly workload: WorkloadRef;
  readonly profile: string;
  readonly pods: number;
  readonly current: number;
  readonly outdated: number;
  readonly missing: number;
  /** The specs the pods' agents were injected from, by hash (`unknown`: an agent without a readable status), with pod counts. */
  readonly revisions: readonly RevisionCount[];
}

export interface RevisionCount {
  readonly hash: string;
  readonly pods: number;
  /** The spec in force. */
  readonly current: boolean;
  /** Kept by the rbac-syncer; always true for the spec in force. */
  readonly known: boolean;
  /**
   * Of `pods`, those whose agent the injector cannot have written: not exactly this spec's rendering,
   * or an earlier spec's in a pod created after SPEC_CHANGE_LAG had passed since it was replaced. They
   * keep no RBAC; all of an unknown spec's.
   */
  readonly notInjected: number;
}

export const UNKNOWN_REVISION = 'unknown';

interface Tally {
  readonly workload: WorkloadRef;
  readonly profile: string;
  readonly counts: Record<AgentStateName, number>;
  readonly revisions: Map<string, { pods: number; known: boolean; notInjected: number }>;
}

/**
 * Tallies pods into one entry per workload and profile as they stream past (a list page at a time):
 * its size grows with the workloads, not the pods.
 */
export class AgentReport {
  private readonly tallies = new Map<string, Tally>();
  constructor(
    private readonly inForceHashes: ReadonlyMap<string, string>,
    /** Whether the rbac-syncer keeps this earlier spec. */
    private readonly stored: (profile: string, hash: string) => boolean,
  ) {}

  /** Entries (workload and profile) so far. */
  get size(): number {
    return this.tallies.size;
  }

  /** One opted-in, live pod's state for one profile. */
  add(workload: WorkloadRef, profile: string, state: AgentState): void {
    const key = `${workloadKey(workload)} ${profile}`;
    let tally = this.tallies.get(key);
    if (!tally) {
      tally = { workload, profile, counts: { current: 0, outdated: 0, missing: 0 }, revisions: new Map() };
      this.tallies.set(key, tally);
    }
    tally.counts[state.state]++;
    if (state.state === 'missing') return;
    const revision = state.state === 'current' ? (this.inForceHashes.get(profile) ?? UNKNOWN_REVISION) : (state.hash ?? UNKNOWN_REVISION);
    const seen = tally.revisions.get(revision) ?? { pods: 0, known: state.state === 'current' || (state.hash !== undefined && this.stored(profile, state.hash)), notInjected: 0 };
    seen.pods++;
    if (state.state === 'outdated' && !state.verified) seen.notInjected++;
    tally.revisions.set(revision, seen);
  }

  /** Sorted by namespace, kind, name and profile. */
  rows(): WorkloadAgents[] {
    return [...this.tallies.values()]
      .map((t) => ({
        workload: t.workload,
        profile: t.profile,
        pods: t.counts.current + t.counts.outdated + t.counts.missing,
        ...t.counts,
        revisions: [...t.revisions.entries()]
          .map(([hash, { pods, known, notInjected }]) => ({ hash, pods, current: hash === this.inForceHashes.get(t.profile), known, notInjected }))
          .sort((a, b) => Number(b.current) - Number(a.current) || b.pods - a.pods || (a.hash < b.hash ? -1 : 1)),
      }))
      .sort((a, b) => compare(workloadKey(a.workload), workloadKey(b.workload)) || compare(a.profile, b.profile));
  }
}

/** The rows `--outdated` and `--missing` keep (both: either); all without a filter. */
export function filterRows(rows: readonly WorkloadAgents[], filter: { readonly outdated: boolean; readonly missing: boolean }): WorkloadAgents[] {
  if (!filter.outdated && !filter.missing) return [...rows];
  return rows.filter((r) => (filter.outdated && r.outdated > 0) || (filter.missing && r.missing > 0));
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
