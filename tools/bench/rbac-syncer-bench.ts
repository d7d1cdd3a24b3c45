import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { CoreV1Api, RbacAuthorizationV1Api } from '@kubernetes/client-node';
import { INJECTION_LABEL_KEY, INJECTION_LABEL_VALUE } from '@outrigger/admission';
import { REFERENCE_PROFILE_FILE } from '@outrigger/agent-profiles';
import { freePort, kubeConfigFrom, startApp, startControlPlane } from '@outrigger/control-plane';
import { deployedNodeOptions } from '../deploy/render.js';

// Benchmark (not a test): N annotated pods across M labelled namespaces exist before the
// rbac-syncer starts; measures start → converged binding, API writes, and the syncer's peak RSS.
//   npx nx run rbac-syncer:build && node --import tsx --conditions development tools/bench/rbac-syncer-bench.ts
const { values } = parseArgs({
  options: {
    pods: { type: 'string', default: '10000' },
    namespaces: { type: 'string', default: '1000' },
    // Each value is one syncer run over the same pods with that NODE_OPTIONS ('' = Node's defaults).
    'node-options': { type: 'string', multiple: true },
  },
});
const DEPLOYED_NODE_OPTIONS = deployedNodeOptions('rbac-syncer');
const pods = Number(values.pods);
const namespaces = Number(values.namespaces);

const cp = await startControlPlane({ apiServerArgs: ['--max-requests-inflight=2000', '--max-mutating-requests-inflight=1000'], log: () => undefined });
try {
  const kc = kubeConfigFrom(cp.kubeconfigPath);
  const core = kc.makeApiClient(CoreV1Api);
  const names = Array.from({ length: namespaces }, (_, i) => `bench-${i}`);
  const seeding = Date.now();
  // The syncer's own namespace holds its Lease.
  await core.createNamespace({ body: { metadata: { name: 'outrigger-system' } } });
  await pool(names, 32, async (name) => {
    await core.createNamespace({ body: { metadata: { name, labels: { [INJECTION_LABEL_KEY]: INJECTION_LABEL_VALUE } } } });
    await core.createNamespacedServiceAccount({ namespace: name, body: { metadata: { name: 'default' } } });
  });
  await pool(Array.from({ length: pods }, (_, i) => i), 64, (i) =>
    core.createNamespacedPod({
      namespace: names[i % namespaces],
      body: {
        metadata: {
          name: `pod-${i}`,
          annotations: {
            'xxl-agent/enable': 'true',
            'xxl-agent/job-addr': 'http://xxl-job-admin:8080/xxl-job-admin',
            'xxl-agent/target-container': 'app',
            'xxl-agent/job-name': `job-${i}`,
          },
        },
        spec: { containers: [{ name: 'app', image: 'app:1' }] },
      },
    }),
  );
  console.log(`seeded ${namespaces} namespaces and ${pods} pods in ${((Date.now() - seeding) / 1000).toFixed(1)} s`);

  const rbac = kc.makeApiClient(RbacAuthorizationV1Api);
  // Twice on the same pods: with Node's default heap settings, then with the NODE_OPTIONS that
  // deploy/base/rbac-syncer sets (read from the manifest).
  // The managed ClusterRole and binding are deleted in between, so both runs start from nothing.
  for (const nodeOptions of values['node-options'] ?? ['', DEPLOYED_NODE_OPTIONS]) {
    const label = `NODE_OPTIONS=${JSON.stringify(nodeOptions)}${nodeOptions === DEPLOYED_NODE_OPTIONS ? ' (as deploy/base sets it)' : ''}`;
    await rbac.deleteClusterRoleBinding({ name: 'xxl-agent-exec' }).catch(() => undefined);
    await rbac.deleteClusterRole({ name: 'xxl-agent-exec' }).catch(() => undefined);
    const port = await freePort();
    const started = Date.now();
    const syncer = await startApp('rbac-syncer', {
      env: { KUBECONFIG: cp.kubeconfigPath, PROFILES_FILE: REFERENCE_PROFILE_FILE, PORT: String(port), POD_NAMESPACE: 'outrigger-system', NODE_OPTIONS: nodeOptions },
      readyUrl: `http://127.0.0.1:${port}/readyz`,
      logFile: join(mkdtempSync(join(tmpdir(), 'rbac-bench-')), 'rbac-syncer.log'),
      timeoutMs: 120_000,
    });
    let subjects = 0;
    while (Date.now() - started < 300_000) {
      subjects = await rbac
        .readClusterRoleBinding({ name: 'xxl-agent-exec' })
        .then((b) => b.subjects?.length ?? 0)
        .catch(() => 0);
      if (subjects === namespaces) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const converged = (Date.now() - started) / 1000;
    const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    const writes = [...metrics.matchAll(/^outrigger_rbac_syncer_api_writes_total\{([^}]*)\} (\d+)/gm)].map((m) => `${m[1]}=${m[2]}`);
    const hwm = Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${syncer.pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
    await syncer.stop();

    console.log(`\n${label}`);
    console.log(`  binding subjects: ${subjects} of ${namespaces}`);
    console.log(`  start → converged binding: ${converged.toFixed(1)} s   (target ≤ 30 s)`);
    console.log(`  API writes: ${writes.join(', ') || 'none reported'}   (target: one per changed subject set)`);
    console.log(`  peak RSS of the syncer: ${hwm.toFixed(0)} MiB = ${((hwm * 1048576) / 1e6).toFixed(0)} MB   (target ≤ 150 MB)`);
    if (subjects !== namespaces) process.exitCode = 1;
  }
} finally {
  await cp.stop();
}

async function pool<T>(items: readonly T[], width: number, work: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) await work(items[next++]);
    }),
  );
}
