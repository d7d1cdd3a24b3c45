import { ProjectionStore } from '@outrigger/kube';
import { describe, expect, it } from 'vitest';
import { type AgentCountValue, agentCountEntries, agentCounts } from './agent-counts.js';
import { podSubjectEntries } from './live-subjects.js';
import type { PodView } from './pod-view.js';

const rs = { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-5d8f', uid: 'u-1' };
const view = (over: Partial<PodView> = {}): PodView => ({ namespace: 'shop', serviceAccount: 'web', profiles: [], sharesToken: [], agents: [{ profile: 'xxl-job', state: 'current' }], deleting: false, ...over });

/** The pod store's index, as the syncer files pods in it. */
function index(views: readonly PodView[]): (group: string) => Iterable<[AgentCountValue, number]> {
  const store = new ProjectionStore<PodView, AgentCountValue>({ index: (v) => [...podSubjectEntries(v), ...agentCountEntries(v)] });
  views.forEach((v, i) => store.set(`pod-${i}`, v));
  return (group) => store.indexValues(group);
}

describe('agentCounts', () => {
  const views = [
    view(),
    view(),
    view({ agents: [{ profile: 'xxl-job', state: 'outdated', hash: 'h1' }] }),
    view({ agents: [{ profile: 'xxl-job', state: 'current', canary: true }] }),
    view({ namespace: 'pay', agents: [{ profile: 'xxl-job', state: 'outdated' }] }),
    view({ agents: [{ profile: 'xxl-job', state: 'missing' }], owner: rs }),
    view({ agents: [{ profile: 'xxl-job', state: 'missing' }], owner: rs }),
    view({ namespace: 'pay', agents: [{ profile: 'xxl-job', state: 'missing' }] }),
    view({ agents: [{ profile: 'xxl-job', state: 'current' }], deleting: true }),
    view({ agents: [{ profile: 'xxl-job-2', state: 'missing' }], owner: rs }),
    view({ namespace: 'unlabelled', agents: [{ profile: 'xxl-job', state: 'missing' }] }),
  ];

  it('counts live pods of one profile by state, outdated ones by spec, and the owners of missing agents', () => {
    const counts = agentCounts(index(views), 'xxl-job', (ns) => ns !== 'unlabelled');
    expect({ current: counts.current, outdated: counts.outdated, missing: counts.missing, canary: counts.canary }).toEqual({ current: 3, outdated: 2, missing: 3, canary: 1 });
    expect(counts.outdatedByHash).toEqual(new Map([['h1', 1], ['', 1]]));
    expect(counts.missingOwners).toEqual(
      expect.arrayContaining([
        { namespace: 'shop', owner: rs, pods: 2 },
        { namespace: 'pay', owner: undefined, pods: 1 },
      ]),
    );
    expect(counts.missingOwners).toHaveLength(2);
  });

  it('counts nothing of another profile whose name it begins, nor pods being deleted', () => {
    const counts = agentCounts(index(views), 'xxl-job-2', () => true);
    expect({ current: counts.current, outdated: counts.outdated, missing: counts.missing }).toEqual({ current: 0, outdated: 0, missing: 1 });
    expect(agentCountEntries(view({ deleting: true }))).toEqual([]);
  });

  it('reads back exactly what it filed, whatever characters an owner\'s name holds: a pod is never counted in another namespace', () => {
    const spaced = { ...rs, name: 'web x victim-ns' };
    const counts = agentCounts(index([view({ namespace: 'unlabelled', agents: [{ profile: 'xxl-job', state: 'missing' }], owner: spaced })]), 'xxl-job', (ns) => ns !== 'unlabelled');
    expect({ missing: counts.missing, owners: counts.missingOwners }).toEqual({ missing: 0, owners: [] });
    expect(agentCounts(index([view({ agents: [{ profile: 'xxl-job', state: 'missing' }], owner: spaced })]), 'xxl-job', () => true).missingOwners).toEqual([{ namespace: 'shop', owner: spaced, pods: 1 }]);
  });
});
