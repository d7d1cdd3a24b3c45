import { ProjectionStore } from '@outrigger/kube';
import { describe, expect, it } from 'vitest';
import { liveByNamespace, podSubjectEntries } from './live-subjects.js';
import type { PodView } from './pod-view.js';

const view = (over: Partial<PodView> = {}): PodView => ({ namespace: 'shop', serviceAccount: 'web', profiles: ['xxl-job'], sharesToken: [], agents: [], deleting: false, ...over });

describe('podSubjectEntries', () => {
  it('files a pod under each of its profiles with its ServiceAccount, one group per profile and namespace', () => {
    const [audit, job] = podSubjectEntries(view({ profiles: ['audit', 'xxl-job'] }));
    expect(audit?.[1]).toBe('web');
    expect(job?.[1]).toBe('web');
    expect(audit?.[0]).not.toBe(job?.[0]);
    expect(podSubjectEntries(view({ namespace: 'pay' }))[0]?.[0]).not.toBe(job?.[0]);
  });

  it('files a pod being deleted under nothing: it no longer keeps its ServiceAccount bound', () => {
    expect(podSubjectEntries(view({ deleting: true }))).toEqual([]);
  });
});

describe('liveByNamespace', () => {
  it("reads back one profile's ServiceAccounts in the namespaces asked for, none of another profile", () => {
    const store = new ProjectionStore<PodView>({ index: podSubjectEntries });
    const views = [view(), view({ serviceAccount: 'api' }), view({ namespace: 'pay', serviceAccount: 'default' }), view({ profiles: ['xxl-job-2'], namespace: 'other' }), view({ namespace: 'elsewhere' })];
    views.forEach((v, i) => store.set(`pod-${i}`, v));
    const keys = (group: string) => store.indexKeys(group);
    expect(liveByNamespace(keys, 'xxl-job', ['shop', 'pay', 'other'])).toEqual(new Map([['shop', ['web', 'api']], ['pay', ['default']]]));
    expect(liveByNamespace(keys, 'xxl-job-2', ['shop', 'other'])).toEqual(new Map([['other', ['web']]]));
  });
});
