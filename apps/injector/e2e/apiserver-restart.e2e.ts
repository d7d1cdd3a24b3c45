import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { INJECTION_LABEL_KEY, INJECTION_LABEL_VALUE } from '@outrigger/admission';
import { createTestNamespace, kubeConfigFrom, repoRoot, startControlPlane, type ControlPlane } from '@outrigger/control-plane';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { heldAndListed } from './held-namespaces.js';
import { injectorSamples } from './injector-metrics.js';
import { servingPair, startInjector, type RunningInjector } from './injector-process.js';
import { eventually } from './eventually.js';

// A control plane of its own: its kube-apiserver is stopped and started again under the injector,
// whose watches (AgentProfiles, labelled namespaces, its serving Secret) must say so in /metrics
// and follow what changed once it is back.
const dir = mkdtempSync(join(tmpdir(), 'injector-restart-'));
const SECRET = 'injector-restart-tls';
let cp: ControlPlane;
let injector: RunningInjector;
let namespace: string;
let own: string;

function kubectl(...args: string[]): string {
  return execFileSync(join(cp.binDir, 'kubectl'), ['--kubeconfig', cp.kubeconfigPath, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/** Each watched resource's restarts and last complete list, from the injector's /metrics. */
async function watches(): Promise<Map<string, { restarts: number; lastSync: number | undefined }>> {
  const restarts = await injectorSamples(injector.baseUrl, injector.ca, 'outrigger_injector_watch_restarts_total');
  const lastSync = await injectorSamples(injector.baseUrl, injector.ca, 'outrigger_injector_last_sync_timestamp_seconds');
  return new Map([...restarts].map(([labels, n]) => [/resource="([^"]*)"/.exec(labels)?.[1] ?? labels, { restarts: n, lastSync: lastSync.get(labels) }]));
}

beforeAll(async () => {
  cp = await startControlPlane({ log: () => undefined });
  const kc = kubeConfigFrom(cp.kubeconfigPath);
  kubectl('apply', '--server-side', '-f', join(repoRoot(), 'deploy/base/crd/agentprofiles.outrigger.dev.yaml'));
  kubectl('wait', '--for=condition=Established', '--timeout=60s', 'customresourcedefinitions/agentprofiles.outrigger.dev');
  kubectl('apply', '--server-side', '-f', join(repoRoot(), 'libs/admission/fixtures/profiles/config-agent.yaml'));
  namespace = await createTestNamespace(kc, 'restart', { [INJECTION_LABEL_KEY]: INJECTION_LABEL_VALUE });
  own = await createTestNamespace(kc, 'restart-own');
  const pair = servingPair();
  writeFileSync(join(dir, 'tls.crt'), pair.serving.cert);
  writeFileSync(join(dir, 'tls.key'), pair.serving.key);
  kubectl('create', 'secret', 'tls', SECRET, '-n', own, `--cert=${join(dir, 'tls.crt')}`, `--key=${join(dir, 'tls.key')}`);
  injector = await startInjector(pair, { PROFILES_FILE: '', KUBECONFIG: cp.kubeconfigPath, TLS_SECRET: `${own}/${SECRET}`, POD_NAMESPACE: own });
}, 180_000);

afterAll(async () => {
  await injector?.process.stop();
  await cp?.stop();
});

describe('the injector across an API server restart', () => {
  it('counts a restart of each watch in /metrics, lists each again, and holds what changed while it was away', async () => {
    const resources = ['agentprofiles', 'namespaces', `secret ${SECRET}`];
    const before = await eventually('every watch listed once', watches, (w) => resources.every((r) => w.get(r)?.lastSync !== undefined));
    expect([...before.keys()].sort()).toEqual(resources);
    for (const r of resources) expect(before.get(r)?.restarts, r).toBe(0);
    await eventually('the injector to hold the namespaces listed', () => heldAndListed(injector, kubectl), ({ held, listed }) => held?.digest === listed.digest);

    await cp.stopApiServer();
    await new Promise((r) => setTimeout(r, 3_000)); // the injector's watches break meanwhile
    await cp.startApiServer();
    kubectl('annotate', 'namespace', namespace, 'config-agent.example.com/limits.memory=96Mi');

    const after = await eventually('every watch restarted and listed again', watches, (w) =>
      resources.every((r) => (w.get(r)?.restarts ?? 0) > 0 && (w.get(r)?.lastSync ?? 0) > (before.get(r)?.lastSync ?? 0)),
    );
    expect([...after.keys()].sort()).toEqual(resources);
    const held = await eventually('the injector to hold the annotated namespace', () => heldAndListed(injector, kubectl), ({ held, listed }) => held?.digest === listed.digest);
    expect(held.held?.held).toBe(held.listed.count);
    expect(injector.process.running).toBe(true);
  });
});
