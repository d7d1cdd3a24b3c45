import { afterEach, describe, expect, it } from 'vitest';
import type { KubeObject } from './kube-object.js';
import { Reflector, type ReflectorOptions } from './reflector.js';
import { InMemoryApi } from './testing/in-memory-api.js';

const PODS = '/api/v1/namespaces/team/pods';
const pod = (name: string, phase = 'Running'): KubeObject => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'team' }, status: { phase } }) as KubeObject;
const phaseOf = (obj: KubeObject) => (obj as { status?: { phase?: string } }).status?.phase;

async function until(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 3_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

const started: Reflector<unknown>[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((r) => r.stop()));
});

function reflect<P>(api: InMemoryApi, project: (obj: KubeObject) => P | undefined, events: string[], options: Partial<ReflectorOptions<P>> = {}): Reflector<P> {
  const r = new Reflector<P>(api, {
    path: PODS,
    project,
    backoff: { baseMs: 5, maxMs: 10 },
    onAdd: (key, value) => events.push(`add ${key} ${String(value)}`),
    onUpdate: (key, value, old) => events.push(`update ${key} ${String(old)}→${String(value)}`),
    onDelete: (key, old) => events.push(`delete ${key} ${String(old)}`),
    onSynced: () => events.push('synced'),
    ...options,
  });
  started.push(r as Reflector<unknown>);
  return r.start();
}

describe('Reflector', () => {
  it('lists, then follows the watch: adds, updates that change the projection, deletes', async () => {
    const api = new InMemoryApi();
    api.put(PODS, pod('a'));
    const events: string[] = [];
    const r = reflect(api, phaseOf, events);
    await r.whenSynced();
    api.put(PODS, pod('b', 'Pending'));
    api.put(PODS, pod('b', 'Pending')); // same projection: not delivered
    api.put(PODS, pod('b', 'Running'));
    api.remove(PODS, 'a');
    await until(() => events.length === 5, 'the watch events');
    expect(events).toEqual(['add team/a Running', 'synced', 'add team/b Pending', 'update team/b Pending→Running', 'delete team/a Running']);
    expect(r.status()).toMatchObject({ hasSynced: true, viewComplete: true, restarts: 0 });
  });

  it('retries a failed list with backoff, incomplete meanwhile', async () => {
    const api = new InMemoryApi();
    api.put(PODS, pod('a'));
    api.fail(PODS, 2);
    const events: string[] = [];
    const r = reflect(api, phaseOf, events);
    await r.whenSynced();
    expect(r.status()).toMatchObject({ hasSynced: true, viewComplete: true, restarts: 2 });
    expect(r.status().lastError).toMatch(/500/);
    expect(events).toEqual(['add team/a Running', 'synced']);
  });

  it('relist() re-projects everything and delivers only the differences, without counting a restart', async () => {
    const api = new InMemoryApi();
    api.put(PODS, pod('a'));
    api.put(PODS, pod('b', 'Pending'));
    let wanted = 'Running';
    const events: string[] = [];
    const r = reflect(api, (obj) => (phaseOf(obj) === wanted ? 'kept' : undefined), events);
    await r.whenSynced();
    wanted = 'Pending';
    r.relist();
    await until(() => events.filter((e) => e === 'synced').length === 2, 'the relist');
    expect(events.slice(0, 2)).toEqual(['add team/a kept', 'synced']);
    expect(events.slice(2, 4).sort()).toEqual(['add team/b kept', 'delete team/a kept']);
    expect(events[4]).toBe('synced');
    expect(r.status().restarts).toBe(0);
    // And it watches on from the new list.
    api.put(PODS, pod('c', 'Pending'));
    await until(() => r.keys().includes('team/c'), 'the watch after the relist');
  });

  it('streamingList takes the state from a watch with sendInitialEvents, then watches on from its end bookmark', async () => {
    const api = new InMemoryApi();
    api.put(PODS, pod('a'));
    api.put(PODS, pod('b', 'Pending'));
    const events: string[] = [];
    const r = reflect(api, phaseOf, events, { streamingList: true });
    await r.whenSynced();
    expect(events).toEqual(['add team/a Running', 'add team/b Pending', 'synced']);
    expect(r.status().resourceVersion).toBe('3');
    api.put(PODS, pod('c'));
    await until(() => r.keys().includes('team/c'), 'the watch after the initial events');
    expect(api.requests).toEqual([`GET ${PODS} (watch)`, `GET ${PODS} (watch)`]); // never a list
  });

  it('streamingList falls back to pages for good when the API server refuses it', async () => {
    const api = new InMemoryApi();
    api.watchList = false;
    api.put(PODS, pod('a'));
    const events: string[] = [];
    const r = reflect(api, phaseOf, events, { streamingList: true, onError: (_error, info) => events.push(`error ${info.message}`) });
    await r.whenSynced();
    expect(events).toEqual([expect.stringMatching(/refused a streaming list of .*pods \(.*422.*WatchList feature gate.*\); listing in pages from now on/), 'add team/a Running', 'synced']);
    r.relist();
    await until(() => events.filter((e) => e === 'synced').length === 2, 'the relist');
    // The refused streaming list, then a list and a watch each time.
    expect(api.requests).toEqual([`GET ${PODS} (watch)`, `GET ${PODS}`, `GET ${PODS} (watch)`, `GET ${PODS}`, `GET ${PODS} (watch)`]);
    expect(r.status().restarts).toBe(0);
  });
});
