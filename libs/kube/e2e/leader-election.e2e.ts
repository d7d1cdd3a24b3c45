import { CoordinationV1Api } from '@kubernetes/client-node';
import { createTestNamespace, kubeConfigFrom } from '@outrigger/control-plane';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { LeaderElector, type LeaderElectionOptions, loadKubeClient, type KubeClient } from '../src/index.js';
import { TcpProxy } from './tcp-proxy.js';
import { waitFor } from './wait-for.js';

// Short but proportioned like the defaults (15 s / 10 s / 2 s), so the tests take seconds.
const timing = { leaseDurationMs: 3_000, renewDeadlineMs: 2_000, retryPeriodMs: 300 };

describe('LeaderElector', () => {
  const cp = inject('controlPlane');
  const kc = kubeConfigFrom(cp.kubeconfigPath);
  const client = loadKubeClient(cp.kubeconfigPath);
  const leases = kc.makeApiClient(CoordinationV1Api);
  const running: LeaderElector[] = [];
  afterEach(async () => {
    await Promise.all(running.splice(0).map((e) => e.stop()));
  });

  /** An elector that logs its transitions into the shared `log`. */
  function candidate(client: KubeClient, namespace: string, who: string, log: string[], extra: Partial<LeaderElectionOptions> = {}) {
    const elector = new LeaderElector(client, {
      namespace,
      name: 'outrigger-test',
      identity: who,
      ...timing,
      onStartedLeading: () => log.push(`${who} started`),
      onStoppedLeading: () => void log.push(`${who} stopped`),
      ...extra,
    });
    running.push(elector);
    return elector;
  }

  const holder = async (namespace: string) => (await leases.readNamespacedLease({ namespace, name: 'outrigger-test' })).spec;

  it('elects exactly one of two candidates and records it in the Lease', async () => {
    const namespace = await createTestNamespace(kc, 'le-one');
    const log: string[] = [];
    const seen: Record<string, string[]> = { a: [], b: [] };
    const a = candidate(client, namespace, 'a', log, { onNewLeader: (id) => seen.a.push(id) }).start();
    const b = candidate(client, namespace, 'b', log, { onNewLeader: (id) => seen.b.push(id) }).start();
    const leader = await waitFor('a leader', () => [a, b].find((e) => e.isLeader()));
    const follower = leader === a ? b : a;
    // The follower has read the lease and deferred to the leader.
    await waitFor('the follower to observe the leader', () => seen[follower.identity].includes(leader.identity));
    expect([a.isLeader(), b.isLeader()].filter(Boolean)).toHaveLength(1);
    expect(log).toEqual([`${leader.identity} started`]);
    const spec = await holder(namespace);
    expect(spec).toMatchObject({ holderIdentity: leader.identity, leaseDurationSeconds: 3 });
    // MicroTime fields come back as strings with microseconds, whatever the typings say.
    expect(String(spec?.renewTime)).toMatch(/\.\d{6}Z$/);
  });

  it('hands over at once when the leader stops and releases the lease', async () => {
    const namespace = await createTestNamespace(kc, 'le-release');
    const log: string[] = [];
    const a = candidate(client, namespace, 'a', log).start();
    await waitFor('a to lead', () => a.isLeader());
    const b = candidate(client, namespace, 'b', log).start();
    await waitFor('b to defer to a', async () => (await holder(namespace))?.holderIdentity === 'a' && !b.isLeader());
    await a.stop();
    const released = await holder(namespace);
    // Released: no holder, so b need not wait for expiry (unless it already took over).
    expect(released?.holderIdentity === undefined || released?.holderIdentity === 'b').toBe(true);
    await waitFor('b to lead', () => b.isLeader());
    expect(log).toEqual(['a started', 'a stopped', 'b started']);
    expect(await holder(namespace)).toMatchObject({ holderIdentity: 'b', leaseTransitions: 1 });
  });

  it("keeps the holder's annotations current with each renewal, hands them over with the lease, and removes them on release", async () => {
    const namespace = await createTestNamespace(kc, 'le-annotations');
    const log: string[] = [];
    const annotationsOf = async () => (await leases.readNamespacedLease({ namespace, name: 'outrigger-test' })).metadata?.annotations ?? {};
    let aHolds = 1;
    const a = candidate(client, namespace, 'a', log, { annotations: () => ({ 'example.com/held': String(aHolds) }) }).start();
    await waitFor('a to lead', () => a.isLeader());
    // Another writer's annotation stays: the holder sets its own keys only.
    await waitFor('another writer to annotate the Lease (retried when a renewal wrote in between)', async () => {
      const lease = await leases.readNamespacedLease({ namespace, name: 'outrigger-test' });
      return leases.replaceNamespacedLease({ namespace, name: 'outrigger-test', body: { ...lease, metadata: { ...lease.metadata, annotations: { ...lease.metadata?.annotations, 'example.com/other': 'kept' } } } });
    });
    expect(await annotationsOf()).toMatchObject({ 'example.com/held': '1' });
    aHolds = 2;
    await waitFor('the renewal to carry the new value', async () => (await annotationsOf())['example.com/held'] === '2');
    const b = candidate(client, namespace, 'b', log, { annotations: () => ({ 'example.com/held': 'b' }) }).start();
    await waitFor('b to defer to a', async () => (await holder(namespace))?.holderIdentity === 'a' && !b.isLeader());
    // A follower writes nothing: what the Lease says is the holder's.
    expect((await annotationsOf())['example.com/held']).toBe('2');
    await a.stop();
    await waitFor('b to lead', () => b.isLeader());
    await waitFor("b's annotation", async () => (await annotationsOf())['example.com/held'] === 'b');
    await b.stop();
    expect(await annotationsOf()).toEqual({ 'example.com/other': 'kept' });
    expect(log).toEqual(['a started', 'a stopped', 'b started', 'b stopped']);
  });

  it('without release, the successor takes over only after the lease expired', async () => {
    const namespace = await createTestNamespace(kc, 'le-expire');
    const log: string[] = [];
    const a = candidate(client, namespace, 'a', log, { releaseOnStop: false }).start();
    await waitFor('a to lead', () => a.isLeader());
    const b = candidate(client, namespace, 'b', log).start();
    await waitFor('b to defer to a', async () => (await holder(namespace))?.holderIdentity === 'a' && !b.isLeader());
    await a.stop();
    expect((await holder(namespace))?.holderIdentity).toBe('a'); // still a's until it expires
    await waitFor('b to lead', () => b.isLeader());
    expect(log).toEqual(['a started', 'a stopped', 'b started']);
    expect(await holder(namespace)).toMatchObject({ holderIdentity: 'b', leaseTransitions: 1 });
  });

  it('a leader that cannot renew stops leading before anybody else can take over', async () => {
    const namespace = await createTestNamespace(kc, 'le-cut');
    const url = new URL(cp.server);
    const proxy = await TcpProxy.start({ host: url.hostname, port: Number(url.port) });
    try {
      const log: string[] = [];
      const errors: string[] = [];
      const a = candidate(proxy.kubeClient(cp.kubeconfigPath), namespace, 'a', log, { onError: (_e, info) => errors.push(info.message) }).start();
      await waitFor('a to lead', () => a.isLeader());
      const b = candidate(client, namespace, 'b', log).start();
      await waitFor('b to defer to a', async () => (await holder(namespace))?.holderIdentity === 'a' && !b.isLeader());
      proxy.cutOff();
      await waitFor('b to lead', () => b.isLeader());
      // The order is the safety property: a gave up (renewDeadline) before b could acquire (leaseDuration).
      expect(log).toEqual(['a started', 'a stopped', 'b started']);
      expect(a.isLeader()).toBe(false);
      expect(errors.length).toBeGreaterThan(0);
    } finally {
      await proxy.stop();
    }
  });

  it('a leader whose connection hangs gives up, and rejoins as follower when it comes back', async () => {
    const namespace = await createTestNamespace(kc, 'le-hang');
    const url = new URL(cp.server);
    const proxy = await TcpProxy.start({ host: url.hostname, port: Number(url.port) });
    try {
      const log: string[] = [];
      const seenByA: string[] = [];
      const a = candidate(proxy.kubeClient(cp.kubeconfigPath), namespace, 'a', log, { onNewLeader: (id) => seenByA.push(id) }).start();
      await waitFor('a to lead', () => a.isLeader());
      const b = candidate(client, namespace, 'b', log).start();
      await waitFor('b to defer to a', async () => (await holder(namespace))?.holderIdentity === 'a' && !b.isLeader());
      proxy.freeze(); // requests are sent into the void and never answered
      await waitFor('b to lead', () => b.isLeader());
      expect(log).toEqual(['a started', 'a stopped', 'b started']);
      proxy.restore();
      // Request timeouts keep a's loop alive: it reads the lease again and defers to b.
      await waitFor('a to see b', () => seenByA.includes('b'));
      expect(a.isLeader()).toBe(false);
      expect(log).toEqual(['a started', 'a stopped', 'b started']);
    } finally {
      await proxy.stop();
    }
  });

  it('refuses timings that could produce two leaders', () => {
    expect(() => new LeaderElector(client, { namespace: 'x', name: 'y', leaseDurationMs: 10_000, renewDeadlineMs: 10_000 })).toThrow(/renewDeadline/);
  });
});
