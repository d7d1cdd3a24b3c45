import { afterEach, describe, expect, it } from 'vitest';
import { Controller, type ControllerOptions } from './controller.js';
import type { KubeObject } from './kube-object.js';
import { InMemoryApi } from './testing/in-memory-api.js';

const PODS = '/api/v1/namespaces/team/pods';
const LEASES = '/apis/coordination.k8s.io/v1/namespaces/team/leases';
const pod = (name: string, profile: string): KubeObject => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'team', annotations: { profile } } });
const profileOf = (obj: KubeObject) => obj.metadata?.annotations?.['profile'];

/** Resolves once `check` holds (polling the event loop), or fails after 3 s. */
async function until(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 3_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

const quiet = { log: () => undefined, warn: () => undefined };
const running: Array<Pick<Controller<unknown>, 'shutdown'>> = [];

function controller(api: InMemoryApi, options: Partial<ControllerOptions> = {}): Controller {
  const c = new Controller(api, { keys: () => ['a', 'b'], log: quiet, queue: { baseDelayMs: 5, maxDelayMs: 20 }, ...options });
  running.push(c);
  return c;
}

afterEach(async () => {
  await Promise.all(running.splice(0).map((c) => c.shutdown()));
});

describe('Controller', () => {
  it('reconciles every key after the first list, then only the keys a change maps to', async () => {
    const api = new InMemoryApi();
    api.put(PODS, pod('p1', 'a'));
    const seen: string[] = [];
    const c = controller(api);
    const pods = c.watches('pods', { path: PODS, project: profileOf, mapper: (profile) => [profile] });
    c.run((key) => void seen.push(key));
    await until(() => seen.length === 2, 'the first reconciles');
    expect(seen.sort()).toEqual(['a', 'b']);
    expect(pods.get('team/p1')).toBe('a');

    seen.length = 0;
    api.put(PODS, pod('p2', 'b'));
    await until(() => seen.length === 1, 'the reconcile of b');
    api.put(PODS, pod('p2', 'a')); // moved from b to a: both concerned
    await until(() => seen.length === 3, 'a and b');
    expect(seen[0]).toBe('b');
    expect(seen.slice(1).sort()).toEqual(['a', 'b']);
    expect(c.status()).toMatchObject({ synced: true, leader: true, watches: { pods: { hasSynced: true, viewComplete: true } } });
  });

  it('takes typed keys: a change queues the keys its mapper names, told apart by keyId, handed back as they were', async () => {
    type Key = { readonly profile: string; readonly namespace?: string };
    const api = new InMemoryApi();
    const seen: Key[] = [];
    const c = new Controller<Key>(api, { keys: () => [{ profile: 'a' }], keyId: (k) => JSON.stringify([k.profile, k.namespace ?? null]), log: quiet });
    running.push(c);
    c.watches('pods', { path: PODS, project: (obj) => ({ profile: profileOf(obj) ?? '', namespace: obj.metadata?.namespace ?? '' }), mapper: (view) => [view] });
    c.run((key) => void seen.push(key));
    await until(() => seen.length === 1, 'the first reconcile');
    expect(seen).toEqual([{ profile: 'a' }]);
    seen.length = 0;
    api.put(PODS, pod('p1', 'a'));
    await until(() => seen.length === 1, 'the reconcile of a in team');
    expect(seen).toEqual([{ profile: 'a', namespace: 'team' }]);
    c.enqueueAfter({ profile: 'a', namespace: 'team' }, 20);
    await until(() => seen.length === 2, 'the delayed key');
    expect(seen[1]).toEqual({ profile: 'a', namespace: 'team' });
  });

  it('retries a failing key with backoff and tells the error policy', async () => {
    const api = new InMemoryApi();
    const errors: string[] = [];
    let attempts = 0;
    const c = controller(api, { keys: () => ['a'] });
    c.watches('pods', { path: PODS, project: profileOf });
    c.run(
      () => {
        if (++attempts < 3) throw new Error(`attempt ${attempts}`);
      },
      (key, error) => errors.push(`${key}: ${(error as Error).message}`),
    );
    await until(() => attempts === 3, 'the third attempt');
    expect(errors).toEqual(['a: attempt 1', 'a: attempt 2']);
  });

  it('requeues a key after the delay its reconcile asks for', async () => {
    const api = new InMemoryApi();
    const times: number[] = [];
    const c = controller(api, { keys: () => ['a'] });
    c.run(() => (times.push(Date.now()), times.length < 2 ? { requeueAfterMs: 30 } : undefined));
    c.enqueue('a');
    await until(() => times.length === 2, 'the requeue');
    expect((times[1] ?? 0) - (times[0] ?? 0)).toBeGreaterThanOrEqual(25);
  });

  it('starts a watch declared while running, and reports it', async () => {
    const api = new InMemoryApi();
    const c = controller(api);
    c.run(() => undefined);
    expect(c.hasSynced('pods')).toBe(false);
    c.watches('pods', { path: PODS, project: profileOf });
    await until(() => c.hasSynced('pods'), 'the late watch to list');
    expect(Object.keys(c.status().watches)).toEqual(['pods']);
    expect(() => c.watches('pods', { path: PODS, project: profileOf })).toThrow(/declared twice/);
  });

  it('calls onChange before mapping, on every change and list', async () => {
    const api = new InMemoryApi();
    const calls: string[] = [];
    const c = controller(api, { keys: () => [] });
    c.watches('pods', { path: PODS, project: profileOf, onChange: () => calls.push('change'), mapper: (p) => (calls.push(`map ${p}`), []) });
    c.run(() => undefined);
    await until(() => c.hasSynced('pods'), 'the list');
    api.put(PODS, pod('p1', 'a'));
    await until(() => calls.length === 3, 'the add');
    expect(calls).toEqual(['change', 'change', 'map a']);
  });

  it('with a Lease, reconciles only while holding it, and releases it on shutdown', async () => {
    const api = new InMemoryApi();
    const seen: string[] = [];
    const lease = { namespace: 'team', name: 'lock', leaseDurationMs: 1_000, renewDeadlineMs: 600, retryPeriodMs: 50 };
    const other = { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'lock', namespace: 'team' }, spec: { holderIdentity: 'someone-else', leaseDurationSeconds: 3600, renewTime: new Date().toISOString().replace('Z', '000Z') } };
    api.put(LEASES, other as KubeObject);
    const c = controller(api, { keys: () => ['a'], leaderElection: { ...lease, identity: 'me' } });
    c.run((key) => void seen.push(key));
    c.enqueue('a');
    await new Promise((r) => setTimeout(r, 200));
    expect(c.isLeader()).toBe(false);
    expect(seen).toEqual([]);

    api.remove(LEASES, 'lock'); // the other holder went away
    await until(() => c.isLeader(), 'leadership').catch((e: Error) => {
      throw new Error(`${e.message}: ${api.requests.slice(-8).join(', ')}`);
    });
    await until(() => seen.includes('a'), 'a reconcile as leader');
    await c.shutdown();
    running.splice(running.indexOf(c), 1);
    expect((api.get(`${LEASES}/lock`) as { spec?: { holderIdentity?: string } }).spec?.holderIdentity).toBeUndefined();
  });
});
