import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { desiredSubjects, type DesiredSubjectsInput } from './desired-subjects.js';
import { ProjectionStore } from '@outrigger/kube';
import { liveByNamespace, podSubjectEntries } from './live-subjects.js';
import type { PodView } from './pod-view.js';
import type { SaSubject } from './subjects.js';

const pod = (namespace: string, serviceAccount = 'default', extra: Partial<PodView> = {}): PodView => ({
  namespace,
  serviceAccount,
  profiles: ['xxl-job'],
  sharesToken: [],
  agents: [],
  deleting: false,
  ...extra,
});
const sa = (namespace: string, name = 'default'): SaSubject => ({ kind: 'ServiceAccount', namespace, name });

/** The live subjects (or those sharing the agent's token) as the syncer reads them: pods filed in the pod store's index, read back per namespace. */
function liveOf(pods: readonly PodView[], profile: string, group: 'live' | 'sharing' = 'live'): SaSubject[] {
  const store = new ProjectionStore<PodView>({ index: podSubjectEntries });
  pods.forEach((p, i) => store.set(`pod-${i}`, p));
  const live = liveByNamespace((key) => store.indexKeys(key), profile, new Set(pods.map((p) => p.namespace)), group);
  return [...live].flatMap(([namespace, names]) => names.map((name) => sa(namespace, name)));
}

/** The input as the syncer builds it: pods filed in the pod store's index, the live and sharing subjects read back. */
function input({ pods = [], ...over }: Partial<Omit<DesiredSubjectsInput, 'live' | 'sharing'>> & { pods?: readonly PodView[] }): DesiredSubjectsInput {
  return {
    profile: 'xxl-job',
    live: liveOf(pods, over.profile ?? 'xxl-job'),
    sharing: new Set(liveOf(pods, over.profile ?? 'xxl-job', 'sharing').map((s) => `${s.namespace}/${s.name}`)),
    labelledNamespaces: new Set(['a', 'b', 'c', 'kube-system', 'outrigger-system']),
    protectedNamespaces: ['kube-system', 'kube-public', 'kube-node-lease', 'outrigger-system'],
    current: [],
    goneSince: new Map(),
    nowMs: 1_000_000,
    graceMs: 60_000,
    viewComplete: true,
    ...over,
  };
}

describe('desiredSubjects', () => {
  it('binds the ServiceAccount of every opted-in pod in labelled namespaces, sorted and deduplicated', () => {
    const out = desiredSubjects(input({ pods: [pod('c'), pod('a', 'agent'), pod('b'), pod('a', 'agent'), pod('a')] }));
    expect(out.subjects).toEqual([sa('a', 'agent'), sa('a'), sa('b'), sa('c')]);
    expect(out.wakeAtMs).toBeUndefined();
  });

  it('ignores unlabelled and protected namespaces, other profiles and deleting pods', () => {
    const out = desiredSubjects(
      input({
        pods: [
          pod('unlabelled'),
          pod('kube-system'),
          pod('outrigger-system'),
          pod('a', 'default', { profiles: ['other'] }),
          pod('b', 'default', { deleting: true }),
          pod('c'),
        ],
      }),
    );
    expect(out.subjects).toEqual([sa('c')]);
  });

  it('keeps a subject without pods for the grace period, then drops it', () => {
    const first = desiredSubjects(input({ current: [sa('a'), sa('b')], pods: [pod('b')] }));
    expect(first.subjects).toEqual([sa('a'), sa('b')]);
    expect(first.wakeAtMs).toBe(1_000_000 + 60_000);
    expect(first.goneSince.get('a/default')).toBe(1_000_000);

    const during = desiredSubjects(input({ current: first.subjects, pods: [pod('b')], goneSince: first.goneSince, nowMs: 1_059_999 }));
    expect(during.subjects).toEqual([sa('a'), sa('b')]);

    const after = desiredSubjects(input({ current: during.subjects, pods: [pod('b')], goneSince: during.goneSince, nowMs: 1_060_000 }));
    expect(after.subjects).toEqual([sa('b')]);
    expect(after.removedBecause.get('a/default')).toMatch(/no live opted-in pod/);
    // Remembered while still bound (a binding of an earlier version goes later), forgotten once not.
    expect(after.goneSince.get('a/default')).toBe(1_000_000);
    const stillHeld = desiredSubjects(input({ current: during.subjects, pods: [pod('b')], goneSince: after.goneSince, nowMs: 1_070_000 }));
    expect(stillHeld.subjects).toEqual([sa('b')]);
    expect(desiredSubjects(input({ current: after.subjects, pods: [pod('b')], goneSince: after.goneSince, nowMs: 1_070_000 })).goneSince.size).toBe(0);
  });

  it('forgets the clock when a pod comes back within the grace', () => {
    const first = desiredSubjects(input({ current: [sa('a')] }));
    const back = desiredSubjects(input({ current: first.subjects, goneSince: first.goneSince, pods: [pod('a')], nowMs: 1_030_000 }));
    expect(back.subjects).toEqual([sa('a')]);
    expect(back.goneSince.size).toBe(0);
  });

  it('drops a subject at once when its namespace loses the label', () => {
    const out = desiredSubjects(input({ current: [sa('gone')], labelledNamespaces: new Set(['a']) }));
    expect(out.subjects).toEqual([]);
    expect(out.removedBecause.get('gone/default')).toMatch(/not labelled/);
  });

  it("drops at once, whatever its other pods and even while the view is incomplete, a ServiceAccount one of whose pods shares the agent's token", () => {
    const current = [sa('a', 'web'), sa('b')];
    const pods = [pod('a', 'web'), pod('a', 'web', { profiles: [], sharesToken: ['xxl-job'] }), pod('b'), pod('b', 'default', { profiles: [], sharesToken: ['other'] })];
    for (const viewComplete of [true, false]) {
      const result = desiredSubjects(input({ pods, current, viewComplete }));
      expect(result.subjects).toEqual([sa('b')]);
      expect(result.removedBecause.get('a/web')).toMatch(/^a pod of it lets other containers reach the agent's token or volumes/);
      expect(result.wakeAtMs).toBeUndefined();
    }
    // A going pod's token works until it is gone.
    expect(desiredSubjects(input({ pods: [pod('a', 'web'), pod('a', 'web', { profiles: [], sharesToken: ['xxl-job'], deleting: true })], current: [sa('a', 'web')] })).subjects).toEqual([]);
  });

  it('never removes anything while the view is incomplete', () => {
    const out = desiredSubjects(input({ current: [sa('a'), sa('b')], viewComplete: false, nowMs: 9e12, labelledNamespaces: new Set() }));
    expect(out.subjects).toEqual([sa('a'), sa('b')]);
    expect(out.removedBecause.size).toBe(0);
  });

  it('is independent of the order of pods and of stored subjects', () => {
    const ns = fc.constantFrom('a', 'b', 'c', 'kube-system', 'x');
    const podArb = fc.record({
      namespace: ns,
      serviceAccount: fc.constantFrom('default', 'agent', 'job'),
      profiles: fc.subarray(['xxl-job', 'other']),
      sharesToken: fc.oneof({ weight: 4, arbitrary: fc.constant<string[]>([]) }, { weight: 1, arbitrary: fc.subarray(['xxl-job', 'other']) }),
      agents: fc.constant([]),
      deleting: fc.boolean(),
    });
    const subjectArb = fc.record({ kind: fc.constant('ServiceAccount' as const), namespace: ns, name: fc.constantFrom('default', 'agent') });
    fc.assert(
      fc.property(fc.array(podArb, { maxLength: 30 }), fc.array(subjectArb, { maxLength: 10 }), fc.boolean(), fc.integer({ min: 0, max: 120_000 }), (pods, current, complete, seed) => {
        const goneSince = new Map(current.map((s, i) => [`${s.namespace}/${s.name}`, 1_000_000 - ((seed + i * 7_919) % 120_000)]));
        const a = desiredSubjects(input({ pods, current, viewComplete: complete, goneSince }));
        const b = desiredSubjects(input({ pods: [...pods].reverse(), current: [...current].reverse(), viewComplete: complete, goneSince }));
        expect(b.subjects).toEqual(a.subjects);
        expect(b.wakeAtMs).toEqual(a.wakeAtMs);
        expect([...b.goneSince].sort()).toEqual([...a.goneSince].sort());
        // sorted and unique
        const keys = a.subjects.map((s) => `${s.namespace}/${s.name}`);
        expect(keys).toEqual([...new Set(keys)]);
        // never a protected or unlabelled namespace unless kept while the view is incomplete
        if (complete) expect(a.subjects.every((s) => ['a', 'b', 'c'].includes(s.namespace))).toBe(true);
        // never a ServiceAccount one of whose pods, live or going, shares the agent's token
        const sharing = new Set(pods.filter((p) => p.sharesToken.includes('xxl-job')).map((p) => `${p.namespace}/${p.serviceAccount}`));
        expect(keys.filter((k) => sharing.has(k))).toEqual([]);
      }),
    );
  });
});
