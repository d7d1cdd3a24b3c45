import { referenceProfile } from '@outrigger/agent-profiles';
import type { KubeObject } from '@outrigger/kube';
import { Registry } from 'prom-client';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { liveSubjects, podSubjectKeys } from '../desired/live-subjects.js';
import type { PodView } from '../desired/pod-view.js';
import { RbacSyncerMetrics } from '../metrics/rbac-syncer.metrics.js';
import { ProfileReconciler } from './profile-reconciler.js';

const XXL_JOB_PROFILE = referenceProfile();

// An in-memory API server for the calls the reconciler makes.
const store = new Map<string, KubeObject>();
const writes: string[] = [];
const reads: string[] = [];
const keyOf = (o: { kind?: string; name?: string; namespace?: string }) => `${o.kind}/${o.namespace ?? ''}/${o.name}`;
vi.mock('@outrigger/kube', () => ({
  readObject: async (_kc: unknown, ref: { kind: string; name: string; namespace?: string }) => {
    reads.push(keyOf(ref));
    return structuredClone(store.get(keyOf(ref)));
  },
  applyObject: async (_kc: unknown, obj: KubeObject) => {
    const key = keyOf({ kind: obj.kind, name: obj.metadata?.name, namespace: obj.metadata?.namespace });
    writes.push(key);
    store.set(key, structuredClone({ ...obj, metadata: { ...obj.metadata, uid: 'uid-1', resourceVersion: String(writes.length) } }));
    return store.get(key);
  },
  deleteObject: async (_kc: unknown, ref: { kind: string; name: string; namespace?: string }) => {
    writes.push(`delete ${keyOf(ref)}`);
    return store.delete(keyOf(ref));
  },
  listObjects: async (_kc: unknown, type: { kind: string }) => [...store.values()].filter((o) => o.kind === type.kind).map((o) => structuredClone(o)),
}));

const pod = (namespace: string): PodView => ({ namespace, serviceAccount: 'default', profiles: ['xxl-job'], deleting: false });

describe('ProfileReconciler', () => {
  let pods: PodView[];
  let now: number;
  let events: { normal: ReturnType<typeof vi.fn>; warning: ReturnType<typeof vi.fn> };
  let guardProblem: string | undefined;
  /** What the ClusterRole and ClusterRoleBinding watches have seen, by name. */
  let watchedRoles: Map<string, { profile: string; rules: unknown }>;
  let watchedBindings: Map<string, KubeObject>;
  let reconciler: ProfileReconciler;

  beforeEach(() => {
    store.clear();
    writes.length = 0;
    reads.length = 0;
    watchedRoles = new Map();
    watchedBindings = new Map();
    pods = [];
    now = 1_000_000;
    events = { normal: vi.fn(async () => undefined), warning: vi.fn(async () => undefined) };
    guardProblem = undefined;
    reconciler = new ProfileReconciler({
      kc: {} as never,
      view: { liveSubjects: (profile) => liveSubjects(new Set(pods.flatMap(podSubjectKeys)), profile), labelledNamespaces: () => new Set(['a', 'b']), viewComplete: () => true, execGuardProblem: () => guardProblem, ownClusterRole: (name) => watchedRoles.get(name), ownClusterRoleBinding: (name) => watchedBindings.get(name) },
      protectedNamespaces: ['kube-system'],
      graceMs: 60_000,
      events: events as never,
      metrics: new RbacSyncerMetrics(new Registry()),
      log: { log: () => undefined, warn: () => undefined },
      now: () => now,
    });
  });

  it('creates the ClusterRole and binding once, then writes only when the subject set changes', async () => {
    pods = [pod('a')];
    expect((await reconciler.reconcile(XXL_JOB_PROFILE)).wrote).toBe(2);
    expect(writes).toEqual(['ClusterRole//xxl-agent-exec', 'ClusterRoleBinding//xxl-agent-exec']);
    expect((await reconciler.reconcile(XXL_JOB_PROFILE)).wrote).toBe(0);
    pods = [pod('a'), pod('a')]; // same ServiceAccount: no change
    expect((await reconciler.reconcile(XXL_JOB_PROFILE)).wrote).toBe(0);
    pods = [pod('a'), pod('b')];
    expect((await reconciler.reconcile(XXL_JOB_PROFILE)).wrote).toBe(1);
    const binding = store.get('ClusterRoleBinding//xxl-agent-exec') as { subjects: unknown[] };
    expect(binding.subjects).toEqual([
      { kind: 'ServiceAccount', name: 'default', namespace: 'a' },
      { kind: 'ServiceAccount', name: 'default', namespace: 'b' },
    ]);
    expect(events.normal).toHaveBeenLastCalledWith(expect.objectContaining({ kind: 'ClusterRoleBinding' }), 'SubjectsChanged', expect.stringContaining('added b/default'));
  });

  it('reads the ClusterRole only when the watch has not seen it as the profile wants it', async () => {
    pods = [pod('a')];
    await reconciler.reconcile(XXL_JOB_PROFILE);
    const rules = (store.get('ClusterRole//xxl-agent-exec') as { rules: unknown }).rules;
    watchedRoles.set('xxl-agent-exec', { profile: 'xxl-job', rules });
    reads.length = 0;
    await reconciler.reconcile(XXL_JOB_PROFILE);
    expect(reads).toEqual(['ClusterRoleBinding//xxl-agent-exec']);
    watchedRoles.set('xxl-agent-exec', { profile: 'xxl-job', rules: [] }); // edited by hand
    await reconciler.reconcile(XXL_JOB_PROFILE);
    expect(reads).toEqual(['ClusterRoleBinding//xxl-agent-exec', 'ClusterRole//xxl-agent-exec', 'ClusterRoleBinding//xxl-agent-exec']);
  });

  it('reads the ClusterRoleBinding unless the watch shows it at the version its own last write left', async () => {
    pods = [pod('a')];
    await reconciler.reconcile(XXL_JOB_PROFILE);
    const seen = () => watchedBindings.set('xxl-agent-exec', structuredClone(store.get('ClusterRoleBinding//xxl-agent-exec') as KubeObject));
    seen();
    reads.length = 0;
    pods = [pod('a'), pod('b')];
    await reconciler.reconcile(XXL_JOB_PROFILE); // the watch shows our write: no read, and b is added
    expect(reads.filter((r) => r.startsWith('ClusterRoleBinding'))).toEqual([]);
    expect((store.get('ClusterRoleBinding//xxl-agent-exec') as { subjects: unknown[] }).subjects).toHaveLength(2);
    await reconciler.reconcile(XXL_JOB_PROFILE); // the watch has not caught up with that write: read
    expect(reads.filter((r) => r.startsWith('ClusterRoleBinding'))).toEqual(['ClusterRoleBinding//xxl-agent-exec']);
    seen();
    const edited = store.get('ClusterRoleBinding//xxl-agent-exec') as { subjects: unknown[]; metadata: { resourceVersion: string } };
    edited.subjects = [];
    edited.metadata.resourceVersion = 'edited-by-hand';
    watchedBindings.set('xxl-agent-exec', structuredClone(edited as unknown as KubeObject));
    reads.length = 0;
    expect((await reconciler.reconcile(XXL_JOB_PROFILE)).wrote).toBe(1); // a version not ours: read, and repaired
    expect(reads.filter((r) => r.startsWith('ClusterRoleBinding'))).toEqual(['ClusterRoleBinding//xxl-agent-exec']);
  });

  it('keeps the ClusterRoleBinding empty while the exec guard is not in force, says so once, and restores it after', async () => {
    pods = [pod('a'), pod('b')];
    await reconciler.reconcile(XXL_JOB_PROFILE);
    guardProblem = 'exec guard not in force: ValidatingAdmissionPolicy g not found';
    expect((await reconciler.reconcile(XXL_JOB_PROFILE)).wrote).toBe(1);
    expect((store.get('ClusterRoleBinding//xxl-agent-exec') as { subjects: unknown[] }).subjects).toEqual([]);
    expect(events.normal).toHaveBeenLastCalledWith(expect.anything(), 'SubjectsChanged', expect.stringContaining('removed a/default (exec guard not in force'));
    expect(events.warning).toHaveBeenCalledExactlyOnceWith(expect.objectContaining({ kind: 'ClusterRoleBinding', uid: 'uid-1' }), 'ExecGuardMissing', expect.stringContaining('not found'));
    expect((await reconciler.reconcile(XXL_JOB_PROFILE)).wrote).toBe(0); // no grace, no flapping, no second Warning
    expect(events.warning).toHaveBeenCalledOnce();
    guardProblem = undefined;
    expect((await reconciler.reconcile(XXL_JOB_PROFILE)).wrote).toBe(1);
    expect((store.get('ClusterRoleBinding//xxl-agent-exec') as { subjects: unknown[] }).subjects).toHaveLength(2);
    expect(events.normal).toHaveBeenLastCalledWith(expect.anything(), 'ExecGuardRestored', expect.any(String));
  });

  it('a RoleBinding profile does not depend on the exec guard', async () => {
    guardProblem = 'exec guard not in force: x';
    pods = [pod('a')];
    const profile = { ...XXL_JOB_PROFILE, rbac: { clusterRole: 'r', rules: XXL_JOB_PROFILE.rbac?.rules ?? [], binding: { kind: 'RoleBinding' as const, name: 'r' } } };
    await reconciler.reconcile(profile);
    expect(writes).toEqual(['ClusterRole//r', 'RoleBinding/a/r']);
    expect(events.warning).not.toHaveBeenCalled();
  });

  it('keeps a subject through the grace, asks to be woken, then removes it', async () => {
    pods = [pod('a'), pod('b')];
    await reconciler.reconcile(XXL_JOB_PROFILE);
    pods = [pod('b')];
    const during = await reconciler.reconcile(XXL_JOB_PROFILE);
    expect(during).toEqual({ wrote: 0, requeueAfterMs: 60_000, subjects: 2 });
    now += 60_000;
    expect((await reconciler.reconcile(XXL_JOB_PROFILE)).wrote).toBe(1);
    expect(events.normal).toHaveBeenLastCalledWith(expect.anything(), 'SubjectsChanged', expect.stringMatching(/removed a\/default \(no live opted-in pod/));
  });

  it('never touches a binding or ClusterRole it does not own', async () => {
    store.set('ClusterRoleBinding//xxl-agent-exec', { kind: 'ClusterRoleBinding', metadata: { name: 'xxl-agent-exec' }, subjects: [] });
    store.set('ClusterRole//xxl-agent-exec', { kind: 'ClusterRole', metadata: { name: 'xxl-agent-exec' }, rules: [] });
    pods = [pod('a')];
    expect((await reconciler.reconcile(XXL_JOB_PROFILE)).wrote).toBe(0);
    expect(writes).toEqual([]);
  });

  it('repairs a hand edit of its binding', async () => {
    pods = [pod('a')];
    await reconciler.reconcile(XXL_JOB_PROFILE);
    const binding = store.get('ClusterRoleBinding//xxl-agent-exec') as { subjects: unknown[] };
    binding.subjects.push({ kind: 'User', name: 'mallory', apiGroup: 'rbac.authorization.k8s.io' });
    expect((await reconciler.reconcile(XXL_JOB_PROFILE)).wrote).toBe(1);
    expect((store.get('ClusterRoleBinding//xxl-agent-exec') as { subjects: unknown[] }).subjects).toHaveLength(1);
    expect(events.normal).toHaveBeenLastCalledWith(expect.anything(), 'SubjectsChanged', expect.stringContaining('dropped subjects edited in by hand: User:/mallory'));
  });

  it('retires a profile that left: its binding keeps its subjects through the grace, then is empty, while its pods still run', async () => {
    pods = [pod('a')];
    await reconciler.reconcile(XXL_JOB_PROFILE);
    writes.length = 0;
    expect(await reconciler.retire(XXL_JOB_PROFILE)).toEqual({ wrote: 0, requeueAfterMs: 60_000, subjects: 1 });
    now += 60_000;
    expect(await reconciler.retire(XXL_JOB_PROFILE)).toEqual({ wrote: 1, subjects: 0 });
    expect(writes).toEqual(['ClusterRoleBinding//xxl-agent-exec']);
    expect((store.get('ClusterRoleBinding//xxl-agent-exec') as { subjects: unknown[] }).subjects).toEqual([]);
  });
});
