import type { AgentStateName } from '@outrigger/sidecar';
import type { PodOwner } from './owner-reference.js';
import type { PodView } from './pod-view.js';

/**
 * The pod store's index keys for agent counts, encoded and read back only here. They start with
 * "#", which no profile name (a DNS label) does, so they never mix with podSubjectKeys.
 */
const AGENTS = '#agents';
const MISSING = '#missing';

/** Live opted-in pods of one profile by what they run, in the namespaces that take part. */
export interface AgentCounts {
  readonly current: number;
  readonly outdated: number;
  readonly missing: number;
  /** Outdated pods by the spec hash that injected them ("" when the pod names none). */
  readonly outdatedByHash: ReadonlyMap<string, number>;
  /** The workloads whose pods run without the agent. */
  readonly missingOwners: readonly MissingOwner[];
}

export interface MissingOwner {
  readonly namespace: string;
  /** undefined for pods without a controller (bare pods). */
  readonly owner: PodOwner | undefined;
  readonly pods: number;
}

/** The keys a live pod is counted under: one per profile it opted into, and its owner while an agent is missing. */
export function agentCountKeys(view: PodView): string[] {
  if (view.deleting) return [];
  return view.agents.flatMap((agent) => {
    const counted = [AGENTS, agent.profile, agent.state, agent.hash ?? '-', view.namespace].join(' ');
    if (agent.state !== 'missing') return [counted];
    const { apiVersion, kind, name, uid } = view.owner ?? { apiVersion: '-', kind: '-', name: '-', uid: '-' };
    return [counted, [MISSING, agent.profile, view.namespace, apiVersion, kind, name, uid].join(' ')];
  });
}

/** One profile's counts from the store's index (key, pods carrying it), over the namespaces `counts` admits. */
export function agentCounts(index: Iterable<[string, number]>, profile: string, counts: (namespace: string) => boolean): AgentCounts {
  const byState: Record<AgentStateName, number> = { current: 0, outdated: 0, missing: 0 };
  const outdatedByHash = new Map<string, number>();
  const missingOwners: MissingOwner[] = [];
  const agents = `${AGENTS} ${profile} `;
  const missing = `${MISSING} ${profile} `;
  for (const [key, pods] of index) {
    if (key.startsWith(agents)) {
      const [state, hash, namespace] = key.slice(agents.length).split(' ') as [AgentStateName, string, string];
      if (!counts(namespace)) continue;
      byState[state] += pods;
      const spec = hash === '-' ? '' : hash;
      if (state === 'outdated') outdatedByHash.set(spec, (outdatedByHash.get(spec) ?? 0) + pods);
    } else if (key.startsWith(missing)) {
      const [namespace = '', apiVersion = '-', kind = '', name = '', uid = ''] = key.slice(missing.length).split(' ');
      if (!counts(namespace)) continue;
      missingOwners.push({ namespace, owner: apiVersion === '-' ? undefined : { apiVersion, kind, name, uid }, pods });
    }
  }
  return { ...byState, outdatedByHash, missingOwners };
}
