import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoordinationV1Api, CoreV1Api, type KubeConfig, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { INJECTION_LABEL_KEY, INJECTION_LABEL_VALUE, namespacesDigest, type NamespacesHeld, namespacesHeldFrom } from '@outrigger/admission';
import { holderVersionFrom } from '@outrigger/install';
import { createTestNamespace, freePort, kubeConfigFrom, startControlPlane, type ControlPlane, type ManagedProcess } from '@outrigger/control-plane';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bindingSubjects, createPod, deleteAllPods, eventually, LABELS, metric, sa, startSyncer, writeProfiles } from './support.js';

// A control plane of its own: its kube-apiserver is stopped and started again under the syncer.
const BINDING = `xxl-agent-exec-${randomBytes(3).toString('hex')}`;
const dir = mkdtempSync(join(tmpdir(), 'rbac-syncer-restart-'));

describe('rbac-syncer across an apiserver restart', () => {
  let cp: ControlPlane;
  let kc: KubeConfig;
  let syncer: ManagedProcess | undefined;
  let port: number;

  beforeAll(async () => {
    cp = await startControlPlane({ log: () => undefined });
    kc = kubeConfigFrom(cp.kubeconfigPath);
    port = await freePort();
  });

  afterAll(async () => {
    await syncer?.stop();
    await cp?.stop();
  });

  it('converges with no lost or wrong subject, and holds the labelled namespaces as listed', async () => {
    const own = await createTestNamespace(kc, 'rbac-sys');
    const [a, b, c] = [await createTestNamespace(kc, 'a', LABELS), await createTestNamespace(kc, 'b', LABELS), await createTestNamespace(kc, 'c', LABELS)];
    await createPod(kc, a);
    await createPod(kc, b);
    const profilesFile = writeProfiles(dir, BINDING);
    syncer = await startSyncer({ kubeconfigPath: cp.kubeconfigPath, profilesFile, namespace: own, lease: 'rbac-syncer', port, name: 'syncer', dir });
    const subjects = () => bindingSubjects(kc, BINDING);
    await eventually(subjects, (s) => JSON.stringify(s) === JSON.stringify([sa(a), sa(b)].sort()), 'a and b bound');
    const restartsBefore = (await metric(port, 'outrigger_rbac_syncer_watch_restarts_total', ['resource="pods"'])) ?? 0;

    await cp.stopApiServer();
    await new Promise((r) => setTimeout(r, 3_000)); // the syncer's watches break meanwhile
    await cp.startApiServer();

    // What changed "while it was away" as far as the syncer can tell: a leaves, c arrives.
    await deleteAllPods(kc, a);
    await createPod(kc, c);
    const seen: Array<string[] | undefined> = [];
    await eventually(
      async () => {
        const s = await subjects();
        seen.push(s);
        return s;
      },
      (s) => JSON.stringify(s) === JSON.stringify([sa(b), sa(c)].sort()),
      'b and c bound after the restart',
      60_000,
    );
    // b, whose pod never went away, was never dropped
    expect(seen.filter((s) => Array.isArray(s)).every((s) => s?.includes(sa(b)))).toBe(true);
    expect((await metric(port, 'outrigger_rbac_syncer_watch_restarts_total', ['resource="pods"'])) ?? 0).toBeGreaterThan(restartsBefore);
    expect(syncer.running).toBe(true);

    // Its /readyz and, as the leader, its Lease hold the labelled namespaces as the API server lists them (what `outrigger check` compares), through a change made after the restart that it plans nothing from.
    await kc.makeApiClient(CoreV1Api).patchNamespace({ name: b, body: [{ op: 'add', path: '/metadata/annotations', value: { 'example.com/changed': 'yes' } }] }, setHeaderOptions('Content-Type', PatchStrategy.JsonPatch));
    const heldAndListed = async () => {
      const listed = await kc.makeApiClient(CoreV1Api).listNamespace({ labelSelector: `${INJECTION_LABEL_KEY}=${INJECTION_LABEL_VALUE}` });
      const held = ((await (await fetch(`http://127.0.0.1:${port}/readyz`)).json()) as { details?: { sync?: { namespaces?: NamespacesHeld } } }).details?.sync?.namespaces;
      const lease = await kc.makeApiClient(CoordinationV1Api).readNamespacedLease({ namespace: own, name: 'rbac-syncer' });
      return { held, published: namespacesHeldFrom(lease.metadata?.annotations), version: holderVersionFrom(lease.metadata?.annotations, lease.spec?.holderIdentity), listed: { count: listed.items.length, digest: namespacesDigest(listed.items.map((n) => ({ name: n.metadata?.name ?? '', resourceVersion: n.metadata?.resourceVersion ?? '' }))) } };
    };
    const now = await eventually(heldAndListed, ({ held, published, listed }) => held?.digest === listed.digest && published?.digest === listed.digest, 'the syncer to hold the labelled namespaces as listed, and to publish them on its Lease');
    expect(now.held?.held).toBe(now.listed.count);
    expect(now.published?.held).toBe(now.listed.count);
    // Beside them, the version of the syncer that leads.
    expect(now.version).toMatch(/^\d+\.\d+\.\d+\+dev$/);
  });
});
