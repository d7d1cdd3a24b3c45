import type { ControllerRef, IndexEntry } from '@outrigger/kube';
import type { AgentStateName } from '@outrigger/sidecar';
import type { PodView } from './pod-view.js';

/**
 * The pod store's index groups for agent counts, one per profile and kind, starting with "#" so
 * they never mix with the live groups. Each entry carries what it counts as a typed value; its key
 * only tells equal values apart and is never read back.
 */
const AGENTS = '#agents';
const MISSING = '#missing';
const group = (kind: typeof AGENTS | typeof MISSING, profile: string) => `${kind} ${profile}`;

/** What a pod's entry in the pod store's index counts. */
export type AgentCountValue =
  /** A live pod of the profile: what its agent runs, the hash of an outdated agent's spec ("" when none). */
  | { readonly kind: 'counted'; readonly namespace: string; readonly state: AgentStateName; readonly canary: boolean; readonly hash: string }
  /** A live pod without its agent: its controller (none for a bare pod). */
  | { readonly kind: 'missing'; readonly namespace: string; readonly owner: ControllerRef | undefined };

/** Live opted-in pods of one profile by what they run, in the namespaces that take part. */
export interface AgentCounts {
  readonly current: number;
  readonly outdated: number;
  readonly missing: number;
  /** Of the current ones, those running the agent of the profile's staged change. */
  readonly canary: number;
  /** Outdated pods by the spec hash that injected them ("" when the pod names none). */
  readonly outdatedByHash: ReadonlyMap<string, number>;
  /** The workloads whose pods run without the agent. */
  readonly missingOwners: readonly MissingOwner[];
}

export interface MissingOwner {
  readonly namespace: string;
  /** undefined for pods without a controller (bare pods). */
  readonly owner: ControllerRef | undefined;
  readonly pods: number;
}

/** Where a live pod is counted: one entry per profile it opted into, and its owner while an agent is missing. */
export function agentCountEntries(view: PodView): Array<IndexEntry<AgentCountValue>> {
  if (view.deleting) return [];
  const { namespace, owner } = view;
  return view.agents.flatMap((agent): Array<IndexEntry<AgentCountValue>> => {
    const counted = { kind: 'counted', namespace, state: agent.state, canary: agent.canary === true, hash: agent.hash ?? '' } as const;
    const entries: Array<IndexEntry<AgentCountValue>> = [[group(AGENTS, agent.profile), JSON.stringify([namespace, counted.state, counted.canary, counted.hash]), counted]];
    if (agent.state === 'missing') entries.push([group(MISSING, agent.profile), JSON.stringify([namespace, owner ?? null]), { kind: 'missing', namespace, owner }]);
    return entries;
  });
}

/** One profile's counts from the store's index (a group's values with the pods carrying each), over the namespaces `counts` admits. */
export function agentCounts(index: (group: string) => Iterable<[AgentCountValue, number]>, profile: string, counts: (namespace: string) => boolean): AgentCounts {
  const byState: Record<AgentStateName, number> = { current: 0, outdated: 0, missing: 0 };
  let canary = 0;
  const outdatedByHash = new Map<string, number>();
  const missingOwners: MissingOwner[] = [];
  for (const [value, pods] of index(group(AGENTS, profile))) {
    if (value.kind !== 'counted' || !counts(value.namespace)) continue;
    byState[value.state] += pods;
    if (value.canary) canary += pods;
    if (value.state === 'outdated') outdatedByHash.set(value.hash, (outdatedByHash.get(value.hash) ?? 0) + pods);
  }
  for (const [value, pods] of index(group(MISSING, profile))) {
    if (value.kind !== 'missing' || !counts(value.namespace)) continue;
    missingOwners.push({ namespace: value.namespace, owner: value.owner, pods });
  }
  return { ...byState, canary, outdatedByHash, missingOwners };
}
