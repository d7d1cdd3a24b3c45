import { CoreV1Api } from '@kubernetes/client-node';
import { createTestNamespace, kubeConfigFrom, startControlPlane } from '@outrigger/control-plane';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { Reflector, resourcePath, type KubeObject, type ReflectorOptions, loadKubeClient, type KubeClient } from '../src/index.js';
import { TcpProxy } from './tcp-proxy.js';
import { waitFor } from './wait-for.js';

/** What a controller would keep of a pod: a few fields, never the object. */
interface PodView {
  readonly serviceAccount?: string;
  readonly app?: string;
}

const projectPod = (pod: KubeObject): PodView => ({
  serviceAccount: (pod.spec as { serviceAccountName?: string } | undefined)?.serviceAccountName,
  app: pod.metadata?.labels?.app,
});

const pod = (name: string, labels: Record<string, string> = {}) => ({
  metadata: { name, labels },
  spec: { containers: [{ name: 'app', image: 'busybox:1.36' }] },
});

/** A reflector on the pods of one namespace that records what it delivers. */
function podReflector(client: KubeClient, namespace: string, options: Partial<ReflectorOptions<PodView>> = {}) {
  const events: string[] = [];
  const errors: string[] = [];
  const rawErrors: unknown[] = [];
  let syncs = 0;
  const reflector = new Reflector<PodView>(client, {
    path: resourcePath({ apiVersion: 'v1', resource: 'pods', namespace }),
    project: projectPod,
    backoff: { baseMs: 100, maxMs: 1_000 },
    onAdd: (key, value) => events.push(`add ${key} ${value.app ?? '-'}`),
    onUpdate: (key, value, old) => events.push(`update ${key} ${old.app ?? '-'}->${value.app ?? '-'}`),
    onDelete: (key) => events.push(`delete ${key}`),
    onSynced: () => events.push(`synced ${++syncs}`),
    onError: (error, info) => errors.push(info.message) && rawErrors.push(error),
    ...options,
  });
  return { reflector, events, errors, rawErrors };
}

describe('Reflector', () => {
  const cp = inject('controlPlane');
  const kc = kubeConfigFrom(cp.kubeconfigPath);
  const client = loadKubeClient(cp.kubeconfigPath);
  const core = kc.makeApiClient(CoreV1Api);
  const cleanup: Array<() => Promise<unknown>> = [];
  afterEach(async () => {
    for (const step of cleanup.splice(0).reverse()) await step();
  });

  it('lists existing pods page by page, then delivers adds, updates and deletes of projections', async () => {
    const namespace = await createTestNamespace(kc, 'refl-basic');
    for (const name of ['a', 'b', 'c']) await core.createNamespacedPod({ namespace, body: pod(name, { app: 'v1' }) });
    const { reflector, events, errors } = podReflector(client, namespace, { pageSize: 1 });
    cleanup.push(() => reflector.stop());
    reflector.start();
    await reflector.whenSynced();
    expect(events).toEqual([`add ${namespace}/a v1`, `add ${namespace}/b v1`, `add ${namespace}/c v1`, 'synced 1']);
    expect(reflector.get(`${namespace}/a`)).toEqual({ serviceAccount: 'default', app: 'v1' });
    expect(reflector.status()).toMatchObject({ hasSynced: true, viewComplete: true, restarts: 0 });
    events.length = 0;

    await core.createNamespacedPod({ namespace, body: pod('d', { app: 'v1' }) });
    await core.patchNamespacedPod({ namespace, name: 'a', body: [{ op: 'replace', path: '/metadata/labels/app', value: 'v2' }] });
    // A change outside the projection must not wake anybody.
    await core.patchNamespacedPod({ namespace, name: 'b', body: [{ op: 'add', path: '/metadata/annotations', value: { noise: '1' } }] });
    await core.deleteNamespacedPod({ namespace, name: 'c' });
    await core.createNamespacedPod({ namespace, body: pod('e', { app: 'last' }) });
    await waitFor('the last add', () => events.includes(`add ${namespace}/e last`));
    expect(events).toEqual([`add ${namespace}/d v1`, `update ${namespace}/a v1->v2`, `delete ${namespace}/c`, `add ${namespace}/e last`]);
    expect(reflector.keys().sort()).toEqual(['a', 'b', 'd', 'e'].map((n) => `${namespace}/${n}`));
    expect(reflector.status().lastEventAt).toBeInstanceOf(Date);
    expect(errors).toEqual([]);
  });

  it('streamingList: takes the state from a watch with sendInitialEvents, with the selector, then follows changes', async () => {
    const namespace = await createTestNamespace(kc, 'refl-stream');
    for (const name of ['a', 'b', 'c']) await core.createNamespacedPod({ namespace, body: pod(name, { app: name === 'c' ? 'other' : 'v1' }) });
    const { reflector, events, errors } = podReflector(client, namespace, { streamingList: true, labelSelector: 'app=v1' });
    cleanup.push(() => reflector.stop());
    reflector.start();
    await reflector.whenSynced();
    // Kubernetes 1.34 and later serve it (the WatchList feature gate is on): no fallback to pages.
    expect(errors).toEqual([]);
    expect(events.slice(0, 2).sort()).toEqual([`add ${namespace}/a v1`, `add ${namespace}/b v1`]);
    expect(events[2]).toBe('synced 1');
    events.length = 0;
    await core.deleteNamespacedPod({ namespace, name: 'a' });
    await core.createNamespacedPod({ namespace, body: pod('d', { app: 'v1' }) });
    await waitFor('the changes after the initial events', () => events.includes(`add ${namespace}/d v1`));
    expect(events).toEqual([`delete ${namespace}/a`, `add ${namespace}/d v1`]);
    expect(reflector.status()).toMatchObject({ hasSynced: true, viewComplete: true, restarts: 0 });
  });

  it('honours label selectors and treats objects projected to undefined as absent', async () => {
    const namespace = await createTestNamespace(kc, 'refl-select');
    await core.createNamespacedPod({ namespace, body: pod('web', { app: 'web', tier: 'front' }) });
    await core.createNamespacedPod({ namespace, body: pod('db', { app: 'db', tier: 'back' }) });
    await core.createNamespacedPod({ namespace, body: pod('cache', { app: 'cache', tier: 'back', ignore: 'yes' }) });
    const { reflector, events } = podReflector(client, namespace, {
      labelSelector: 'tier=back',
      project: (p) => (p.metadata?.labels?.ignore ? undefined : projectPod(p)),
    });
    cleanup.push(() => reflector.stop());
    await reflector.start().whenSynced();
    expect(reflector.keys()).toEqual([`${namespace}/db`]);
    // Becoming interesting is an add, ceasing to be is a delete.
    await core.patchNamespacedPod({ namespace, name: 'cache', body: [{ op: 'remove', path: '/metadata/labels/ignore' }] });
    await core.patchNamespacedPod({ namespace, name: 'db', body: [{ op: 'add', path: '/metadata/labels/ignore', value: 'yes' }] });
    await waitFor('db to drop out', () => events.includes(`delete ${namespace}/db`));
    expect(events.slice(2)).toEqual([`add ${namespace}/cache cache`, `delete ${namespace}/db`]);
  });

  it('watches across namespaces and cluster-scoped resources (keys without namespace)', async () => {
    const [one, two] = [await createTestNamespace(kc, 'refl-wide'), await createTestNamespace(kc, 'refl-wide')];
    const run = `run-${Date.now()}`;
    await core.createNamespacedPod({ namespace: one, body: pod('p', { run }) });
    const { reflector } = podReflector(client, one, { path: resourcePath({ apiVersion: 'v1', resource: 'pods' }), labelSelector: `run=${run}` });
    cleanup.push(() => reflector.stop());
    await reflector.start().whenSynced();
    await core.createNamespacedPod({ namespace: two, body: pod('p', { run }) });
    await waitFor('the pod in the second namespace', () => reflector.get(`${two}/p`));
    expect(reflector.keys().sort()).toEqual([`${one}/p`, `${two}/p`].sort());

    const namespaces = new Reflector<string>(client, {
      path: resourcePath({ apiVersion: 'v1', resource: 'namespaces' }),
      fieldSelector: `metadata.name=${two}`,
      project: (ns) => (ns.status as { phase?: string } | undefined)?.phase,
    });
    cleanup.push(() => namespaces.stop());
    await namespaces.start().whenSynced();
    expect(namespaces.entries()).toEqual([[two, 'Active']]);
  });

  it('receives bookmarks, which advance its resourceVersion while its own objects are quiet', async () => {
    const namespace = await createTestNamespace(kc, 'refl-bookmark');
    const elsewhere = await createTestNamespace(kc, 'refl-elsewhere');
    await core.createNamespacedPod({ namespace, body: pod('quiet') });
    // The apiserver sends a bookmark 2 s before a watch's timeoutSeconds, else about once a minute;
    // a short server-side timeout makes one due within seconds. The watch cache only has a newer
    // resourceVersion to announce once pods change somewhere, hence the pods in another namespace.
    const { reflector, events } = podReflector(client, namespace, { watchTimeoutSeconds: 4 });
    cleanup.push(() => reflector.stop());
    await reflector.start().whenSynced();
    const listedAt = Number(reflector.status().resourceVersion);
    let n = 0;
    await waitFor(
      'a bookmark',
      async () => {
        await core.createNamespacedPod({ namespace: elsewhere, body: pod(`noise-${n++}`) });
        return reflector.status().bookmarks > 0;
      },
      60_000,
      1_000,
    );
    expect(Number(reflector.status().resourceVersion)).toBeGreaterThan(listedAt);
    expect(events).toEqual([`add ${namespace}/quiet -`, 'synced 1']);
    expect(reflector.status().restarts).toBe(0);
  });

  it('after being cut off, relists and delivers what was created and deleted meanwhile', async () => {
    const namespace = await createTestNamespace(kc, 'refl-cut');
    await core.createNamespacedPod({ namespace, body: pod('stays', { app: 'x' }) });
    await core.createNamespacedPod({ namespace, body: pod('goes', { app: 'x' }) });
    const url = new URL(cp.server);
    const proxy = await TcpProxy.start({ host: url.hostname, port: Number(url.port) });
    cleanup.push(() => proxy.stop());
    const { reflector, events } = podReflector(proxy.kubeClient(cp.kubeconfigPath), namespace);
    cleanup.push(() => reflector.stop());
    await reflector.start().whenSynced();
    events.length = 0;

    proxy.cutOff();
    await waitFor('the reflector to notice', () => !reflector.status().viewComplete);
    await core.deleteNamespacedPod({ namespace, name: 'goes' });
    await core.createNamespacedPod({ namespace, body: pod('new', { app: 'x' }) });
    await core.patchNamespacedPod({ namespace, name: 'stays', body: [{ op: 'replace', path: '/metadata/labels/app', value: 'y' }] });
    expect(events).toEqual([]);
    proxy.restore();

    await waitFor('the relist', () => events.includes('synced 2'), 60_000);
    // Differences of a relist come in list order, deletes first; the sync after all of them.
    expect(events.slice(0, 3).sort()).toEqual([`add ${namespace}/new x`, `delete ${namespace}/goes`, `update ${namespace}/stays x->y`]);
    expect(events.slice(3)).toEqual(['synced 2']);
    expect(reflector.status()).toMatchObject({ viewComplete: true });
    expect(reflector.status().restarts).toBeGreaterThan(0);
  });

  it('restarts a watch that went silent (dead-stream detection)', async () => {
    const namespace = await createTestNamespace(kc, 'refl-dead');
    const url = new URL(cp.server);
    const proxy = await TcpProxy.start({ host: url.hostname, port: Number(url.port) });
    cleanup.push(() => proxy.stop());
    const { reflector, events, errors } = podReflector(proxy.kubeClient(cp.kubeconfigPath), namespace, { deadStreamTimeoutMs: 3_000 });
    cleanup.push(() => reflector.stop());
    await reflector.start().whenSynced();

    proxy.freeze(); // the connection stays up, but nothing arrives any more
    await waitFor('the silence to be noticed', () => errors.some((e) => e.includes('no event or bookmark')));
    expect(reflector.status().viewComplete).toBe(false);
    await core.createNamespacedPod({ namespace, body: pod('after') });
    proxy.restore();
    await waitFor('the pod created while frozen', () => reflector.get(`${namespace}/after`));
    await waitFor('a complete view again', () => reflector.status().viewComplete);
    expect(events).toContain(`add ${namespace}/after -`);
    expect(reflector.status().restarts).toBeGreaterThan(0);
  });

  it('stop() ends a reflector that never reached the apiserver, and whenSynced rejects', async () => {
    const url = new URL(cp.server);
    const proxy = await TcpProxy.start({ host: url.hostname, port: Number(url.port) });
    cleanup.push(() => proxy.stop());
    proxy.cutOff();
    const { reflector, errors } = podReflector(proxy.kubeClient(cp.kubeconfigPath), 'default');
    const synced = reflector.start().whenSynced();
    await waitFor('a failed attempt', () => errors.length > 0);
    await reflector.stop();
    await expect(synced).rejects.toThrow(/stopped before its first sync/);
    expect(reflector.status()).toMatchObject({ hasSynced: false, viewComplete: false });
  });
});

describe('Reflector across an apiserver restart', () => {
  it('reconnects, relists, and reflects what changed around the outage', async () => {
    const cp = await startControlPlane();
    try {
      const kc = kubeConfigFrom(cp.kubeconfigPath);
      const client = loadKubeClient(cp.kubeconfigPath);
      const core = kc.makeApiClient(CoreV1Api);
      const namespace = await createTestNamespace(kc, 'refl-restart');
      await core.createNamespacedPod({ namespace, body: pod('before', { app: 'x' }) });
      await core.createNamespacedPod({ namespace, body: pod('doomed', { app: 'x' }) });
      const { reflector, events } = podReflector(client, namespace, { backoff: { baseMs: 200, maxMs: 2_000 } });
      try {
        await reflector.start().whenSynced();
        await cp.stopApiServer();
        await waitFor('the reflector to notice the outage', () => !reflector.status().viewComplete);
        await cp.startApiServer();
        await core.deleteNamespacedPod({ namespace, name: 'doomed' });
        await core.createNamespacedPod({ namespace, body: pod('after', { app: 'x' }) });
        await waitFor('the changes', () => reflector.get(`${namespace}/after`) && !reflector.get(`${namespace}/doomed`), 90_000);
        await waitFor('a complete view', () => reflector.status().viewComplete, 90_000);
        expect(reflector.keys().sort()).toEqual([`${namespace}/after`, `${namespace}/before`]);
        expect(events).toContain(`delete ${namespace}/doomed`);
        expect(reflector.status().restarts).toBeGreaterThan(0);
        expect(events.filter((e) => e.startsWith('synced')).length).toBeGreaterThan(1);
      } finally {
        await reflector.stop();
      }
    } finally {
      await cp.stop();
    }
  });
});

describe('Reflector and 410 Gone', () => {
  it('relists when the resourceVersion it resumes from was compacted away', async () => {
    // Without the watch cache, watches are served by etcd, which forgets history at every compaction.
    const cp = await startControlPlane({ apiServerArgs: ['--watch-cache=false', '--etcd-compaction-interval=2s'] });
    try {
      const kc = kubeConfigFrom(cp.kubeconfigPath);
      const client = loadKubeClient(cp.kubeconfigPath);
      const core = kc.makeApiClient(CoreV1Api);
      const namespace = await createTestNamespace(kc, 'refl-gone');
      const elsewhere = await createTestNamespace(kc, 'refl-busy');
      await core.createNamespacedPod({ namespace, body: pod('quiet', { app: 'x' }) });
      // Short server-side watches, so the reflector keeps resuming from its (aging) resourceVersion.
      const { reflector, events, errors, rawErrors } = podReflector(client, namespace, { watchTimeoutSeconds: 2 });
      try {
        await reflector.start().whenSynced();
        let n = 0;
        await waitFor(
          'a 410 Gone',
          async () => {
            // Writes elsewhere move etcd's revision on, so compaction overtakes the reflector's.
            await core.createNamespacedConfigMap({ namespace: elsewhere, body: { metadata: { name: `c${n++}` } } });
            return reflector.status().gone > 0;
          },
          90_000,
          500,
        );
        expect(errors.some((e) => e.startsWith('HTTP 410'))).toBe(true);
        await waitFor('the relist', () => events.includes('synced 2'));
        await core.createNamespacedPod({ namespace, body: pod('later', { app: 'x' }) });
        await waitFor('watching again', () => reflector.get(`${namespace}/later`));
        expect(reflector.status()).toMatchObject({ viewComplete: true });
        // The relist found nothing new, so it delivered nothing but syncs.
        expect(events.filter((e) => !e.startsWith('synced'))).toEqual([`add ${namespace}/quiet x`, `add ${namespace}/later x`]);
        // etcd's answer reaches us as an ERROR event inside a 200 watch stream, not as an HTTP 410.
        expect(rawErrors.some((e) => String((e as Error).message).includes('ERROR event in a watch stream'))).toBe(true);
      } finally {
        await reflector.stop();
      }
    } finally {
      await cp.stop();
    }
  });
});
