import { describe, expect, it } from 'vitest';
import { liveSubjects, podSubjectKeys } from './live-subjects.js';
import type { PodView } from './pod-view.js';

const view = (over: Partial<PodView> = {}): PodView => ({ namespace: 'shop', serviceAccount: 'web', profiles: ['xxl-job'], agents: [], deleting: false, ...over });

describe('podSubjectKeys', () => {
  it('files a pod under each of its profiles with its ServiceAccount', () => {
    expect(podSubjectKeys(view({ profiles: ['audit', 'xxl-job'] }))).toEqual(['audit shop/web', 'xxl-job shop/web']);
  });

  it('files a pod being deleted under nothing: it no longer keeps its ServiceAccount bound', () => {
    expect(podSubjectKeys(view({ deleting: true }))).toEqual([]);
  });
});

describe('liveSubjects', () => {
  it("reads back one profile's ServiceAccounts and none of another profile whose name it begins", () => {
    const keys = [view(), view({ namespace: 'pay', serviceAccount: 'default' }), view({ profiles: ['xxl-job-2'], namespace: 'other' })].flatMap(podSubjectKeys);
    expect(liveSubjects(keys, 'xxl-job')).toEqual([
      { kind: 'ServiceAccount', namespace: 'shop', name: 'web' },
      { kind: 'ServiceAccount', namespace: 'pay', name: 'default' },
    ]);
    expect(liveSubjects(keys, 'retired:ClusterRoleBinding/xxl-job')).toEqual([]);
  });
});
