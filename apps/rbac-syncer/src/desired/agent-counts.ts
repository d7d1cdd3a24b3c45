import type { ControllerRef, IndexEntry } from '@outrigger/kube';
import type { AgentStateName } from '@outrigger/sidecar';
import type { PodView } from './pod-view.js';

/**
 * The pod store's index groups and keys for agent counts, encoded and read back only here. The
 * groups are one per profile and start with "#", so they never mix with the live groups.
 */
const AGENTS = '#agents';
const MISSING = '#missing';
const group = (kind: typeof AGENTS | typeof MISSING, profile: string) => `${kind} ${profile}`;
/** In place of the state `current`, for a current agent of the staged change. */
const CANARY = 'canary';
/** A counted pod's key: what it runs, the hash of an outdated agent's spec ("" when none), its namespace. */
type CountedKey = [AgentStateName | typeof CANARY, string, string];
/** A pod without its agent: its namespace and its controller (none for a bare pod). */
type MissingKey = [string, ControllerRef?];

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
export function agentCountEntries(view: PodView): IndexEntry[] {
  if (view.deleting) return [];
  return view.agents.flatMap((agent): IndexEntry[] => {
    const counted: IndexEntry = [group(AGENTS, agent.profile), JSON.stringify([agent.canary ? CANARY : agent.state, agent.hash ?? '', view.namespace] satisfies CountedKey)];
    if (agent.state !== 'missing') return [counted];
    const missing: MissingKey = view.owner ? [view.namespace, view.owner] : [view.namespace];
    return [counted, [group(MISSING, agent.profile), JSON.stringify(missing)]];
  });
}

/** One profile's counts from the store's index (a group's keys with the pods carrying each), over the namespaces `counts` admits. */
export function agentCounts(index: (group: string) => Iterable<[string, number]>, profile: string, counts: (namespace: string) => boolean): AgentCounts {
  const byState: Record<AgentStateName, number> = { current: 0, outdated: 0, missing: 0 };
  let canary = 0;
  const outdatedByHash = new Map<string, number>();
  const missingOwners: MissingOwner[] = [];
  for (const [key, pods] of index(group(AGENTS, profile))) {
    const [stateOrCanary, hash, namespace] = JSON.parse(key) as CountedKey;
    if (!counts(namespace)) continue;
    const state = stateOrCanary === CANARY ? 'current' : stateOrCanary;
    if (stateOrCanary === CANARY) canary += pods;
    byState[state] += pods;
    if (state === 'outdated') outdatedByHash.set(hash, (outdatedByHash.get(hash) ?? 0) + pods);
  }
  for (const [key, pods] of index(group(MISSING, profile))) {
    const [namespace, owner] = JSON.parse(key) as MissingKey;
    if (!counts(namespace)) continue;
    missingOwners.push({ namespace, owner, pods });
  }
  return { ...byState, canary, outdatedByHash, missingOwners };
}
