import { execFile, execFileSync } from 'node:child_process';
import { request } from 'node:https';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { CoreV1Api, RbacAuthorizationV1Api, Watch, type KubeConfig, type V1ClusterRoleBinding } from '@kubernetes/client-node';
import { INJECTION_LABEL_KEY, INJECTION_LABEL_VALUE, mutatePod, type AdmissionContext, type JsonObject } from '@outrigger/admission';
import { PROFILE_LABEL, REFERENCE_PROFILE_FILE, referenceProfile } from '@outrigger/agent-profiles';
import { sidecarExtension } from '@outrigger/sidecar';
import { freePort, kubeConfigFrom, repoRoot, startApp, startControlPlane, type ManagedProcess, deployedMemoryLimit, deployedNodeOptions, scratchDirUntilExit } from '@outrigger/control-plane';
import { inParallel } from '@outrigger/kube';
import { parseSamples } from '../observability/exposition.js';
import { getOptions, listFloor, type ListEncoding, type ListMode } from './list-floor.js';
import { MemoryCgroup } from './memory-cgroup.js';
import { walkProtobufPods } from './protobuf-pod-walk.js';
import { cpuMs, findPid, procStatusBytes } from './proc.js';
import { quantile, spread } from './stats.js';
import { settle, type PendingChange, type Settled } from './subject-changes.js';
import { holdBenchLock } from './bench-lock.js';

// Benchmark (not a test): N annotated pods across M labelled namespaces exist before the
// rbac-syncer starts. (a) cold start, once per --pod-list (pages: per --page-size) and NODE_OPTIONS, interleaved over
// --rounds: start → converged binding, binding writes, peak RSS. (b) churn: pod creates and
// deletes at --churn-rate per second each, some of which add or remove a namespace's
// ServiceAccount from the subject set: latency until the binding shows it, binding writes, RSS.
//   npx nx run rbac-syncer:build && node --import tsx --conditions development tools/bench/rbac-syncer-bench.ts
//   … --pods 150000 --namespaces 5000 --pod-list stream --pod-list pages --page-size 100 --churn-seconds 180 --etcd-dir /var/tmp/syncer-bench-150k
// --baseline-root DIR: a checkout of another commit with its syncer built runs first, cold start and churn, as the baseline;
// --service-accounts N: N ServiceAccounts per namespace (names of 200 characters), the pods spread over them.
// --etcd-dir keeps etcd's data there: a later run with the same --pods and --namespaces skips the seeding.
// --peer adds, each round, an independent peer of the cold start: a client-go informer over every pod
// (tools/kube/cmd/informer-peer, Go, in protobuf as client-go asks by default) that then creates a
// ClusterRoleBinding per namespace as the syncer does from nothing: its sync is the restart's peer, its
// bindings the start from nothing's.
// --list-floor adds, each round, the API server's own floor: every pod sent (JSON and protobuf, pages and
// WatchList) to a client that throws the bytes away unread (list-floor.ts); and the protobuf WatchList
// walked by a minimal decoder of what the syncer reads (protobuf-pod-walk.ts), the lever's measure.
const { values } = parseArgs({
  options: {
    pods: { type: 'string', default: '10000' },
    namespaces: { type: 'string', default: '1000' },
    // Each value is one syncer configuration over the same pods; the first is the baseline of the ratios.
    'page-size': { type: 'string', multiple: true },
    // POD_LIST: 'stream' (WatchList, the default) and/or 'pages' (one configuration per --page-size).
    'pod-list': { type: 'string', multiple: true },
    // Each value is one syncer configuration with that NODE_OPTIONS ('' = Node's defaults).
    'node-options': { type: 'string', multiple: true },
    // Each value is one syncer configuration with these extra variables ('' = none), e.g. 'MALLOC_ARENA_MAX=2'.
    env: { type: 'string', multiple: true },
    rounds: { type: 'string', default: '1' },
    'seed-width': { type: 'string', default: '64' },
    'churn-seconds': { type: 'string', default: '30' },
    'churn-rate': { type: 'string', default: '100' },
    // Of every ten creates (and deletes), this many add (remove) a namespace to (from) the subject set.
    'changing-per-ten': { type: 'string', default: '1' },
    'etcd-dir': { type: 'string' },
    // A checkout of another commit with its syncer built (npx nx run rbac-syncer:build there): run first, as the baseline, cold start and churn.
    'baseline-root': { type: 'string' },
    // ServiceAccounts per seeded namespace; the pods of a namespace are spread over them.
    'service-accounts': { type: 'string', default: '1' },
    // How long a start may take to converge before it counts as failed (seconds).
    'converge-timeout': { type: 'string', default: '300' },
    // The syncer runs in a memory cgroup with this limit (bytes, or 'none'); deploy/base's limit by default, none with --heap-snapshot.
    'memory-limit': { type: 'string' },
    // A V8 heap snapshot of each syncer at convergence from nothing, written into this directory (see heap-summary.ts).
    'heap-snapshot': { type: 'string' },
    peer: { type: 'boolean', default: false },
    'list-floor': { type: 'boolean', default: false },
  },
});
const DEPLOYED_NODE_OPTIONS = deployedNodeOptions('rbac-syncer');
const pods = Number(values.pods);
const namespaces = Number(values.namespaces);
const rounds = Number(values.rounds);
const pageSizes = (values['page-size'] ?? ['100']).map(Number);
const nodeOptionsList = values['node-options'] ?? [DEPLOYED_NODE_OPTIONS];
const envList = (values.env ?? ['']).map((line) => Object.fromEntries(line.split(/\s+/).filter(Boolean).map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)])));
const churnSeconds = Number(values['churn-seconds']);
const churnRate = Number(values['churn-rate']);
const changingPerTen = Number(values['changing-per-ten']);
const serviceAccounts = Number(values['service-accounts']);
const baselineRoot = values['baseline-root'];
const convergeTimeoutMs = Number(values['converge-timeout']) * 1000;
const heapSnapshotDir = values['heap-snapshot'];
/** Every ServiceAccount of the seeded namespaces is bound once converged. */
const seededSubjects = namespaces * serviceAccounts;
const BINDING = 'xxl-agent-exec';
/** The reference profile's bindings: one ClusterRoleBinding per namespace. */
const PROFILE_SELECTOR = `${PROFILE_LABEL}=xxl-job`;
/** What tools/kube/cmd/informer-peer creates. */
const PEER_SELECTOR = 'outrigger.dev/bench-peer=true';
/** The API server's floors, measured with --list-floor: the syncer reads JSON, as a WatchList unless POD_LIST=pages. */
const FLOORS: { encoding: ListEncoding; mode: ListMode }[] = [
  { encoding: 'json', mode: 'stream' },
  { encoding: 'json', mode: 'pages' },
  { encoding: 'protobuf', mode: 'stream' },
  { encoding: 'protobuf', mode: 'pages' },
];
// The syncer binds only pods that carry the agent as the injector writes it, so pods are created injected.
const SIDECAR = [sidecarExtension({ profiles: [referenceProfile()], injectorVersion: 'bench' })];
const MiB = 1048576;
// Writing a heap snapshot takes about the heap's size again: inside deploy/base's limit the syncer is
// OOM-killed doing it, so --heap-snapshot runs it without a limit unless one is given.
const noLimit = values['memory-limit'] === 'none' || (heapSnapshotDir !== undefined && values['memory-limit'] === undefined);
const memoryLimit = noLimit ? undefined : Number(values['memory-limit'] ?? deployedMemoryLimit('rbac-syncer'));
// Labels the pods the churn creates, so that they can be found and removed after it.
const CHURN_LABEL = 'outrigger.dev/bench-churn';
const seedDir = values['etcd-dir'];
// Written once the pods are seeded, and again after the churn removed its pods: the data is as seeded.
const seedMarker = seedDir ? join(seedDir, 'seeded.json') : undefined;
const seed = JSON.stringify({ pods, namespaces, ...(serviceAccounts > 1 ? { serviceAccounts } : {}) });
const reuse = seedMarker !== undefined && existsSync(seedMarker) && readFileSync(seedMarker, 'utf8') === seed;
holdBenchLock();
if (seedDir && !reuse) rmSync(seedDir, { recursive: true, force: true });
if (seedDir) mkdirSync(seedDir, { recursive: true });

// The syncers' logs, kept when the run fails (its messages name them).
const scratch = scratchDirUntilExit(tmpdir(), 'rbac-bench-');
let syncerStarts = 0;
const cp = await startControlPlane({
  apiServerArgs: ['--max-requests-inflight=3000', '--max-mutating-requests-inflight=1500'],
  // 150 000 pods take more than etcd's default 2 GiB backend quota once revisions pile up.
  etcdArgs: ['--quota-backend-bytes=8589934592', '--auto-compaction-mode=revision', '--auto-compaction-retention=10000'],
  etcdDataDir: seedDir ? join(seedDir, 'etcd') : undefined,
  readyTimeoutMs: 900_000,
  log: () => undefined,
});
const children: Syncer[] = [];
try {
  const kc = kubeConfigFrom(cp.kubeconfigPath);
  const core = kc.makeApiClient(CoreV1Api);
  const rbac = kc.makeApiClient(RbacAuthorizationV1Api);
  const names = Array.from({ length: namespaces }, (_, i) => `bench-${i}`);
  // Namespaces the churn moves in and out of the subject set; empty at first.
  const churnNames = Array.from({ length: Math.max(50, churnRate * 5) }, (_, i) => `churn-${i}`);
  // Cluster-wide bindings stay empty unless this checkout's exec guard is in force (a reused seed holds the one of its day).
  execFileSync(join(cp.binDir, 'kubectl'), ['--kubeconfig', cp.kubeconfigPath, 'apply', '-f', join(repoRoot(), 'deploy/base/rbac-syncer/exec-guard.yaml')], { stdio: 'ignore' });
  if (reuse) console.log(`reusing the ${namespaces} namespaces and ${pods} pods seeded in ${seedDir}`);
  else await seedPods(core, names, churnNames);
  if (seedMarker) writeFileSync(seedMarker, seed);

  // (a) Cold start: the managed ClusterRole and bindings are deleted before every start, so each begins from nothing.
  const lists = (values['pod-list'] ?? ['stream']).flatMap((podList) => (podList === 'stream' ? [{ podList, pageSize: pageSizes[0] ?? 100 }] : pageSizes.map((pageSize) => ({ podList, pageSize }))));
  const ours: SyncerConfig[] = lists.flatMap((list) => nodeOptionsList.flatMap((nodeOptions) => envList.map((env) => ({ ...list, nodeOptions, env }))));
  const configs: SyncerConfig[] = [...(baselineRoot && ours[0] ? [{ ...ours[0], root: baselineRoot }] : []), ...ours];
  const results = configs.map(() => ({ converged: [] as number[], rss: [] as number[], writes: [] as number[], restart: [] as number[], restartWrites: [] as number[] }));
  const peerRuns: PeerRun[] = [];
  const floors = FLOORS.map(() => [] as number[]);
  const walks: number[] = [];
  for (let round = 0; round < rounds; round++) {
    if (values['list-floor']) {
      for (const [i, { encoding, mode }] of FLOORS.entries()) {
        const floor = await listFloor(kc, encoding, mode);
        floors[i]?.push(floor.ms / 1000);
        console.log(`  round ${round + 1}, the API server alone (${encoding}, ${mode}, read by no one): ${(floor.bytes / 1e6).toFixed(0)} MB in ${(floor.ms / 1000).toFixed(1)} s`);
      }
      const walk = await walkProtobufPods(kc, referenceProfile().container.name);
      if (walk.subjects !== seededSubjects) throw new Error(`the protobuf walk saw ${walk.subjects} subjects, ${seededSubjects} expected`);
      walks.push(walk.ms / 1000);
      console.log(`  round ${round + 1}, protobuf WatchList walked for what the syncer reads: ${walk.pods} pods, ${walk.subjects} subjects, ${(walk.bytes / 1e6).toFixed(0)} MB in ${(walk.ms / 1000).toFixed(1)} s`);
    }
    if (values.peer) {
      await removePeerRbac(rbac);
      const run = await informerPeer(cp.kubeconfigPath);
      await removePeerRbac(rbac);
      peerRuns.push(run);
      console.log(`  round ${round + 1}, independent peer (client-go informer): ${run.pods} pods, ${run.subjects} subjects, synced in ${(run.syncedMs / 1000).toFixed(1)} s, ${run.bindings} bindings created by ${(run.boundMs / 1000).toFixed(1)} s, peak RSS ${(run.peakRssBytes / MiB).toFixed(0)} MiB`);
    }
    for (const [i, config] of configs.entries()) {
      await rbac.deleteCollectionClusterRoleBinding({ labelSelector: PROFILE_SELECTOR }).catch(() => undefined);
      await rbac.deleteClusterRole({ name: BINDING }).catch(() => undefined);
      // The API server digests those deletions for seconds: a start from nothing should not share the cores with that.
      await apiServerQuiet();
      const breakdown = await startBreakdown(kc);
      const started = Date.now();
      const syncer = await startSyncer(config);
      let subjects = 0;
      // The syncer's own gauge (cheap to poll), then the bindings themselves once it says done.
      while (Date.now() - started < convergeTimeoutMs) {
        subjects = await boundBySyncer(syncer.url);
        if ((subjects === seededSubjects && (subjects = await boundSubjects(rbac)) === seededSubjects) || !syncer.process.running) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      const converged = (Date.now() - started) / 1000;
      if (!syncer.process.running) {
        console.log(`  round ${round + 1}, ${describe(config)}: ${ended(await stopSyncer(syncer))} after ${converged.toFixed(1)} s, with ${subjects} of ${seededSubjects} subjects`);
        process.exitCode = 1;
        continue;
      }
      const metrics = await (await fetch(`${syncer.url}/metrics`)).text();
      const writes = bindingWrites(metrics);
      const hwm = procStatusBytes(syncer.process.pid, 'VmHWM') / MiB;
      const atConvergence = memory(metrics, syncer.process.pid);
      const spent = await breakdown(syncer, metrics);
      if (heapSnapshotDir) console.log(`    heap snapshot: ${await heapSnapshot(syncer.process.pid, heapSnapshotDir)}`);
      await stopSyncer(syncer);
      results[i]?.converged.push(converged);
      results[i]?.rss.push(hwm);
      results[i]?.writes.push(writes);
      console.log(`  round ${round + 1}, ${describe(config)}: ${subjects} of ${seededSubjects} subjects in ${converged.toFixed(1)} s (${spent}), ${writes} binding writes, peak RSS ${hwm.toFixed(0)} MiB; at convergence ${atConvergence}`);
      if (subjects !== seededSubjects) {
        console.log(`    NOT CONVERGED: ${(await syncerStatus(rbac)) ?? 'no status'}; see ${syncer.logFile}`);
        continue;
      }
      // A restart (an upgrade, a new leader): the bindings are in place, so it only has to read.
      const restartBreakdown = await startBreakdown(kc);
      const restarted = Date.now();
      const again = await startSyncer(config);
      while (Date.now() - restarted < convergeTimeoutMs && (await boundBySyncer(again.url)) < seededSubjects) await new Promise((r) => setTimeout(r, 100));
      const restart = (Date.now() - restarted) / 1000;
      const restartMetrics = await (await fetch(`${again.url}/metrics`)).text();
      const restartWrites = bindingWrites(restartMetrics);
      const restartSpent = await restartBreakdown(again, restartMetrics);
      await stopSyncer(again);
      results[i]?.restart.push(restart);
      results[i]?.restartWrites.push(restartWrites);
      console.log(`    restarted with its bindings in place: converged in ${restart.toFixed(1)} s (${restartSpent}), ${restartWrites} binding writes`);
    }
  }
  console.log(`\n(a) cold start, ${pods} pods in ${namespaces} namespaces, ${rounds} round(s): median [min–max]; ratio = median / baseline's median`);
  console.log(`the syncer runs ${limitText()}`);
  const base = results[0];
  for (const [i, config] of configs.entries()) {
    const r = results[i];
    if (!r || !base) continue;
    console.log(`${describe(config)}${i === 0 ? '   (baseline)' : ''}`);
    console.log(`  start → converged binding: ${fmt(spread(r.converged), 1)} s   (target ≤ 15 s)   ${ratio(r.converged, base.converged)}`);
    console.log(`  peak RSS: ${fmt(spread(r.rss), 0)} MiB   (target ≤ 200 MiB)   ${ratio(r.rss, base.rss)}`);
    console.log(`  binding writes: ${fmt(spread(r.writes), 0)}   (target: one per binding, each written once from nothing)`);
    if (r.restart.length) console.log(`  restart with the bindings in place → converged: ${fmt(spread(r.restart), 1)} s, ${fmt(spread(r.restartWrites), 0)} writes   ${ratio(r.restart, base.restart)}`);
    if (peerRuns.length) {
      const synced = peerRuns.map((run) => run.syncedMs / 1000);
      const bound = peerRuns.map((run) => run.boundMs / 1000);
      const rss = peerRuns.map((run) => run.peakRssBytes / MiB);
      console.log(`  vs the independent peer (client-go informer; synced ${fmt(spread(synced), 1)} s, bound ${fmt(spread(bound), 1)} s, peak RSS ${fmt(spread(rss), 0)} MiB): restart ${ratio(r.restart, synced, 'the peer')}, from nothing ${ratio(r.converged, bound, 'the peer')}, peak RSS ${ratio(r.rss, rss, 'the peer')}`);
    }
    for (const [j, { encoding, mode }] of FLOORS.entries()) {
      const floor = floors[j] ?? [];
      if (floor.length) console.log(`  vs the API server alone (${encoding}, ${mode}; ${fmt(spread(floor), 1)} s): restart ${ratio(r.restart, floor, 'the floor')}, from nothing ${ratio(r.converged, floor, 'the floor')}`);
    }
    if (walks.length) console.log(`  vs the protobuf WatchList walked for what the syncer reads (${fmt(spread(walks), 1)} s): restart ${ratio(r.restart, walks, 'the walk')}, from nothing ${ratio(r.converged, walks, 'the walk')}`);
  }

  // (b) Churn, on the first configuration of each syncer (the baseline's and this one's).
  for (const config of [configs[0], baselineRoot ? ours[0] : undefined]) if (churnSeconds > 0 && config) await churn(config, names, churnNames);
} finally {
  for (const syncer of [...children]) await stopSyncer(syncer).catch(() => undefined);
  await cp.stop();
}

interface PeerRun {
  syncedMs: number;
  boundMs: number;
  pods: number;
  subjects: number;
  bindings: number;
  peakRssBytes: number;
}

/** The informer peer's ClusterRole and bindings, gone before and after each run of it, and the API server quiet again. */
async function removePeerRbac(rbac: RbacAuthorizationV1Api): Promise<void> {
  await rbac.deleteCollectionClusterRoleBinding({ labelSelector: PEER_SELECTOR });
  await rbac.deleteCollectionClusterRole({ labelSelector: PEER_SELECTOR });
  await apiServerQuiet();
}

/** One run of tools/kube/cmd/informer-peer: from its start to a synced pod cache, then to its bindings created, and its peak RSS. */
async function informerPeer(kubeconfig: string): Promise<PeerRun> {
  const dir = execFileSync('bash', [join(repoRoot(), 'tools/kube/build.sh'), 'informer-peer'], { encoding: 'utf8' }).trim().split('\n').at(-1) ?? '';
  // Asynchronously: the control plane's output is drained by this event loop meanwhile.
  const { stdout: out } = await promisify(execFile)(join(dir, 'informer-peer'), [`--kubeconfig=${kubeconfig}`, `--agent-container=${referenceProfile().container.name}`], { encoding: 'utf8', timeout: convergeTimeoutMs });
  const run = JSON.parse(out.trim().split('\n').at(-1) ?? '{}') as PeerRun;
  if (run.subjects !== seededSubjects || run.bindings !== namespaces) throw new Error(`the informer peer saw ${run.subjects} subjects in ${run.bindings} bindings, ${seededSubjects} in ${namespaces} expected: ${out}`);
  return run;
}

/** The labelled namespaces, their ServiceAccounts and the pods, created by a bounded parallel creator. */
async function seedPods(core: CoreV1Api, names: readonly string[], churnNames: readonly string[]): Promise<void> {
  const seeding = Date.now();
  const width = Number(values['seed-width']);
  // The syncer's own namespace holds its Lease.
  await core.createNamespace({ body: { metadata: { name: 'outrigger-system' } } });
  await inParallel([...names, ...churnNames], 32, async (name) => {
    await core.createNamespace({ body: { metadata: { name, labels: { [INJECTION_LABEL_KEY]: INJECTION_LABEL_VALUE } } } });
    await core.createNamespacedServiceAccount({ namespace: name, body: { metadata: { name: 'default' } } });
  });
  // More ServiceAccounts per seeded namespace (--service-accounts): long names, as a hostile tenant would pick.
  if (serviceAccounts > 1) {
    await inParallel(names.flatMap((ns) => Array.from({ length: serviceAccounts - 1 }, (_, i) => ({ ns, name: serviceAccountName(i + 1) }))), width, (sa) =>
      retry(() => core.createNamespacedServiceAccount({ namespace: sa.ns, body: { metadata: { name: sa.name } } })),
    );
  }
  let seeded = 0;
  const progress = setInterval(() => console.log(`  seeding: ${seeded} of ${pods} pods, ${((Date.now() - seeding) / 1000).toFixed(0)} s`), 30_000);
  await inParallel(Array.from({ length: pods }, (_, i) => i), width, async (i) => {
    const namespace = names[i % namespaces] as string;
    await retry(() => core.createNamespacedPod({ namespace, body: podBody(`pod-${i}`, namespace, {}, serviceAccountName(Math.floor(i / namespaces) % serviceAccounts)) }));
    seeded++;
  }).finally(() => clearInterval(progress));
  console.log(`seeded ${namespaces} namespaces and ${pods} pods in ${((Date.now() - seeding) / 1000).toFixed(1)} s (${width} parallel creates)`);
}

async function churn(config: SyncerConfig, names: readonly string[], churnNames: readonly string[]): Promise<void> {
  const kc = kubeConfigFrom(cp.kubeconfigPath);
  const core = kc.makeApiClient(CoreV1Api);
  if (seedMarker) rmSync(seedMarker, { force: true }); // until the churn's pods are gone again
  const rbac = kc.makeApiClient(RbacAuthorizationV1Api);
  // From nothing, like the cold start: another syncer's bindings (of another shape) would count as this one's.
  await rbac.deleteCollectionClusterRoleBinding({ labelSelector: PROFILE_SELECTOR }).catch(() => undefined);
  const syncer = await startSyncer(config);
  console.log(`\n(b) churn: the syncer runs ${limitText()}`);
  const waiting = Date.now();
  while ((await boundBySyncer(syncer.url)) < seededSubjects && Date.now() - waiting < convergeTimeoutMs) await new Promise((r) => setTimeout(r, 100));
  if ((await boundBySyncer(syncer.url)) < seededSubjects) {
    console.log(`  ${describe(config)}: not converged after ${convergeTimeoutMs / 1000} s (${await syncerStatus(rbac)}); no churn. See ${syncer.logFile}`);
    await stopSyncer(syncer);
    process.exitCode = 1;
    return;
  }
  // The bindings as the API server serves them, seen by a watch: one per namespace, every write one event.
  const pending = new Map<string, PendingChange>();
  const latencies: Settled[] = [];
  // Which namespaces each binding of the profile holds: one per namespace, or all in the single binding of earlier versions.
  const held = new Map<string, ReadonlySet<string>>();
  let present = new Set<string>();
  let watchedWrites = 0;
  let counting = false;
  // Listed first and watched from there: a write is an event, the bindings already stored are not.
  const stored = await rbac.listClusterRoleBinding({ labelSelector: PROFILE_SELECTOR });
  for (const b of stored.items) held.set(b.metadata?.name ?? '', new Set((b.subjects ?? []).map((s) => s.namespace ?? '')));
  const watch = await new Watch(kc).watch(
    '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings',
    { labelSelector: PROFILE_SELECTOR, resourceVersion: stored.metadata?.resourceVersion },
    (type: string, binding: V1ClusterRoleBinding) => {
      if (counting) watchedWrites++;
      const name = binding.metadata?.name ?? '';
      held.set(name, new Set(type === 'DELETED' ? [] : (binding.subjects ?? []).map((s) => s.namespace ?? '')));
      present = new Set([...held.values()].flatMap((n) => [...n]));
      latencies.push(...settle(pending, present, Date.now()));
    },
    (err: unknown) => {
      if (err && counting) console.error(`binding watch ended: ${String(err)}`);
    },
  );

  const empty = [...churnNames];
  const filled: string[] = [];
  // Pods the churn created in the seeded namespaces, deleted first-in first-out.
  const plain: { namespace: string; name: string }[] = [];
  let serial = 0;
  let changes = 0;
  let podEvents = 0;
  let failures = 0;
  let skipped = 0;
  let inflight = 0;
  const rssSamples: number[] = [];
  const op = async (work: () => Promise<unknown>) => {
    inflight++;
    try {
      await work();
      podEvents++;
    } catch {
      failures++;
    } finally {
      inflight--;
    }
  };
  // The change is stored once the API server answers: from then on the time is the syncer's (and the watches').
  const answered = (namespace: string) => {
    const change = pending.get(namespace);
    if (change) change.answered = Date.now();
  };
  // Who had the two cores during the churn.
  const cpuOf = {
    'the syncer': syncer.process.pid,
    'kube-apiserver': apiServerPid(),
    etcd: etcdPid(),
    'the bench': process.pid,
  };
  const cpuBefore = Object.fromEntries(Object.entries(cpuOf).map(([who, pid]) => [who, cpuMs(pid)]));
  counting = true;
  const start = Date.now();
  const tick = 1000 / churnRate;
  let k = 0;
  const sampler = setInterval(() => syncer.process.running && rssSamples.push(procStatusBytes(syncer.process.pid, 'VmRSS') / MiB), 1000);
  while (Date.now() - start < churnSeconds * 1000) {
    const changing = k % 10 < changingPerTen;
    k++;
    // Open loop with a bound: a tick is dropped, not queued, when the API server falls this far behind.
    if (inflight >= 256) {
      skipped += 2;
      await new Promise((r) => setTimeout(r, Math.max(0, start + k * tick - Date.now())));
      continue;
    }
    const name = `churn-pod-${serial++}`;
    if (changing) {
      // Add: the first pod of an empty churn namespace; remove: the only pod of the oldest filled one.
      const add = empty.find((ns) => !pending.has(ns));
      if (add) {
        empty.splice(empty.indexOf(add), 1);
        // Pending from the request on: the binding cannot show a pod before the API server stored it.
        pending.set(add, { namespace: add, present: true, requested: Date.now() });
        void op(async () => {
          try {
            await core.createNamespacedPod({ namespace: add, body: podBody(name, add, { [CHURN_LABEL]: 'true' }) });
            answered(add);
          } catch (err) {
            pending.delete(add);
            empty.push(add);
            throw err;
          }
          changes++;
          filled.push(add);
        });
      }
      const remove = filled.find((ns) => !pending.has(ns));
      if (remove) {
        filled.splice(filled.indexOf(remove), 1);
        pending.set(remove, { namespace: remove, present: false, requested: Date.now() });
        void op(async () => {
          try {
            await core.deleteCollectionNamespacedPod({ namespace: remove, gracePeriodSeconds: 0 });
            answered(remove);
          } catch (err) {
            pending.delete(remove);
            filled.push(remove);
            throw err;
          }
          changes++;
          empty.push(remove);
        });
      }
    } else {
      const namespace = names[serial % names.length] as string;
      void op(async () => {
        await core.createNamespacedPod({ namespace, body: podBody(name, namespace, { [CHURN_LABEL]: 'true' }) });
        plain.push({ namespace, name });
      });
      const victim = plain.shift();
      if (victim) void op(() => core.deleteNamespacedPod({ ...victim, gracePeriodSeconds: 0 }));
    }
    const due = start + k * tick;
    await new Promise((r) => setTimeout(r, Math.max(0, due - Date.now())));
  }
  const elapsed = (Date.now() - start) / 1000;
  if (!syncer.process.running) {
    clearInterval(sampler);
    watch.abort();
    console.log(`  the syncer was ${ended(await stopSyncer(syncer))} during the churn, after ${elapsed.toFixed(0)} s`);
    process.exitCode = 1;
    return;
  }
  const cpuShares = Object.entries(cpuOf).map(([who, pid]) => `${who} ${((cpuMs(pid) - (cpuBefore[who] ?? 0)) / (elapsed * 10)).toFixed(0)} %`);
  // Let the last changes settle before counting.
  const drain = Date.now();
  while ((pending.size > 0 || inflight > 0) && Date.now() - drain < 30_000) await new Promise((r) => setTimeout(r, 50));
  clearInterval(sampler);
  counting = false;
  watch.abort();
  const unsettled = pending.size;
  const exact = await exactness(rbac, names, filled);
  const hwm = procStatusBytes(syncer.process.pid, 'VmHWM') / MiB;
  const metrics = await (await fetch(`${syncer.url}/metrics`)).text();
  const atEnd = memory(metrics, syncer.process.pid);
  const metricWrites = bindingWrites(metrics);
  const kills = await stopSyncer(syncer);
  if (kills > 0) console.log(`  the syncer was ${ended(kills)} during the churn`);
  // Back to the pods as seeded, for the next run on the same --etcd-dir.
  const created = await core.listPodForAllNamespaces({ labelSelector: CHURN_LABEL });
  await inParallel(created.items, 32, (p) => core.deleteNamespacedPod({ namespace: p.metadata?.namespace ?? '', name: p.metadata?.name ?? '', gracePeriodSeconds: 0 }).catch(() => undefined));
  if (seedMarker) writeFileSync(seedMarker, seed);

  console.log(`\n(b) churn for ${elapsed.toFixed(0)} s, ${describe(config)}, target rate ${churnRate} creates + ${churnRate} deletes per second`);
  console.log(`  pod creates + deletes done: ${podEvents} (${(podEvents / elapsed).toFixed(0)}/s), failed ${failures}, dropped at 256 in flight ${skipped}`);
  console.log(`  subject-set changes made: ${changes}; settled ${latencies.length}, unsettled after 30 s ${unsettled}`);
  console.log(`  the profile's bindings afterwards: ${exact.text}`);
  const fromAnswer = latencies.map((l) => l.fromAnswer);
  const fromRequest = latencies.map((l) => l.fromRequest);
  console.log(
    `  reconcile latency from the API server's answer to the binding showing it: p50 ${quantile(fromAnswer, 0.5).toFixed(0)} ms, p99 ${quantile(fromAnswer, 0.99).toFixed(0)} ms, max ${quantile(fromAnswer, 1).toFixed(0)} ms   (target p99 ≤ 1000 ms)`,
  );
  console.log(`  … from the request, with the API server's queue: p50 ${quantile(fromRequest, 0.5).toFixed(0)} ms, p99 ${quantile(fromRequest, 0.99).toFixed(0)} ms`);
  console.log(
    `  binding writes seen by a watch: ${watchedWrites} = ${(watchedWrites / Math.max(1, changes)).toFixed(2)}× the subject-set changes, ${(watchedWrites / Math.max(1, podEvents)).toFixed(3)}× the pod events   (target ≤ 1× the changes; syncer's own counter since start ${metricWrites}, and ${bindingWrites(metrics, 'outrigger_rbac_syncer_stale_writes_total')} not made because the binding had changed since its watch showed it)`,
  );
  console.log(`  the syncer's own share: ${reconcileTimes(metrics)}`);
  console.log(`  CPU during the churn, % of one core: ${cpuShares.join(', ')}`);
  console.log(`  RSS: median ${quantile(rssSamples, 0.5).toFixed(0)} MiB, peak ${hwm.toFixed(0)} MiB since start   (target ≤ 200 MiB); at the end ${atEnd}`);
  if (unsettled > 0 || !exact.exact) process.exitCode = 1;
}

/** Whether the profile's bindings hold exactly the ServiceAccounts with live pods: every seeded one, and `default` of each filled churn namespace. */
async function exactness(rbac: RbacAuthorizationV1Api, names: readonly string[], filled: readonly string[]): Promise<{ exact: boolean; text: string }> {
  const expected = new Set([...names.flatMap((ns) => Array.from({ length: serviceAccounts }, (_, i) => `${ns}/${serviceAccountName(i)}`)), ...filled.map((ns) => `${ns}/default`)]);
  const list = await rbac.listClusterRoleBinding({ labelSelector: PROFILE_SELECTOR });
  const bound = list.items.flatMap((b) => (b.subjects ?? []).map((s) => `${s.namespace}/${s.name}`));
  const held = new Set(bound);
  const missing = [...expected].filter((s) => !held.has(s)).length;
  const extra = [...held].filter((s) => !expected.has(s)).length;
  const twice = bound.length - held.size;
  const exact = missing === 0 && extra === 0 && twice === 0;
  return { exact, text: `${exact ? 'exact' : 'NOT EXACT'}: ${held.size} ServiceAccounts of ${expected.size} expected, ${missing} missing, ${extra} extra, ${twice} held twice` };
}

interface SyncerConfig {
  readonly podList: string;
  readonly pageSize: number;
  readonly nodeOptions: string;
  readonly env: Readonly<Record<string, string>>;
  /** The checkout whose built syncer runs (--baseline-root); this one when unset. */
  readonly root?: string;
}

interface Syncer {
  readonly process: ManagedProcess;
  readonly url: string;
  readonly logFile: string;
  /** Where it runs with the deployed memory limit. */
  readonly cgroup?: MemoryCgroup;
}

async function startSyncer({ podList, pageSize, nodeOptions, env, root }: SyncerConfig): Promise<Syncer> {
  const port = await freePort();
  const cgroup = memoryLimit === undefined ? undefined : MemoryCgroup.create(memoryLimit);
  const logFile = join(scratch, `rbac-syncer-${++syncerStarts}.log`);
  const child = await startApp('rbac-syncer', {
    root,
    wrap: cgroup ? (argv) => cgroup.command(argv) : undefined,
    env: {
      KUBECONFIG: cp.kubeconfigPath,
      // Each checkout's own reference profile: an earlier syncer refuses fields it does not know.
      PROFILES_FILE: root ? join(root, relative(repoRoot(), REFERENCE_PROFILE_FILE)) : REFERENCE_PROFILE_FILE,
      PORT: String(port),
      POD_NAMESPACE: 'outrigger-system',
      NODE_OPTIONS: heapSnapshotDir ? `${nodeOptions} --heapsnapshot-signal=SIGUSR2 --diagnostic-dir=${heapSnapshotDir}` : nodeOptions,
      POD_PAGE_SIZE: String(pageSize),
      POD_LIST: podList,
      // A removal shows at once, so its latency is the syncer's and not the grace period's.
      GRACE: '0s',
      // As deployed (the test logs' text costs more per line, and a start from nothing logs every binding it creates).
      LOG_FORMAT: 'json',
      ...env,
    },
    readyUrl: `http://127.0.0.1:${port}/readyz`,
    logFile,
    // Ready means the first full list is done: as long as a start may take to converge.
    timeoutMs: convergeTimeoutMs,
  }).catch((error: unknown) => {
    cgroup?.remove();
    throw error;
  });
  const syncer = { process: child, url: `http://127.0.0.1:${port}`, logFile, cgroup };
  children.push(syncer);
  return syncer;
}

/** Stops the syncer and removes its cgroup; returns how many times the OOM killer ended a process in it. */
async function stopSyncer(syncer: Syncer): Promise<number> {
  await syncer.process.stop();
  children.splice(children.indexOf(syncer), 1);
  const kills = syncer.cgroup?.oomKills() ?? 0;
  syncer.cgroup?.remove();
  return kills;
}

function limitText(): string {
  return memoryLimit === undefined ? 'without a memory limit' : `in a memory cgroup with deploy/base's limit, ${(memoryLimit / MiB).toFixed(0)} MiB`;
}

function ended(oomKills: number): string {
  return oomKills > 0 ? `OOM-killed at the ${((memoryLimit ?? 0) / MiB).toFixed(0)} MiB limit` : 'exited';
}

/** The i-th ServiceAccount of a seeded namespace: `default`, then names of 200 characters. */
function serviceAccountName(i: number): string {
  return i === 0 ? 'default' : `sa-${i}-${'x'.repeat(196 - String(i).length)}`;
}

function podBody(name: string, namespace: string, labels: Record<string, string> = {}, serviceAccount = 'default') {
  const pod = {
    metadata: {
      name,
      labels,
      annotations: {
        'xxl-agent/enable': 'true',
        'xxl-agent/job-addr': 'http://xxl-job-admin:8080/xxl-job-admin',
        'xxl-agent/target-container': 'app',
        // One workload per namespace: its pods share their annotations, so the same agent.
        'xxl-agent/job-name': namespace,
      },
    },
    spec: { serviceAccountName: serviceAccount, containers: [{ name: 'app', image: 'app:1' }] },
  };
  const ctx = { uid: 'bench', namespace, name, operation: 'CREATE', dryRun: false } as unknown as AdmissionContext;
  const result = mutatePod(pod as unknown as JsonObject, ctx, SIDECAR);
  if (result.outcome !== 'allowed' || result.decision !== 'injected') throw new Error(`the sidecar extension did not inject: ${JSON.stringify(result)}`);
  return result.pod as never;
}

/** Asks the syncer for a heap snapshot (SIGUSR2) and returns its file once V8 has written it. */
async function heapSnapshot(pid: number, dir: string): Promise<string> {
  mkdirSync(dir, { recursive: true });
  const before = new Set(readdirSync(dir));
  process.kill(pid, 'SIGUSR2');
  for (let waited = 0; waited < 300; waited++) {
    await new Promise((r) => setTimeout(r, 1000));
    const written = readdirSync(dir).find((f) => f.endsWith('.heapsnapshot') && !before.has(f));
    // V8 writes the file in one go and ends it with a closing brace.
    if (written && readFileSync(join(dir, written), 'utf8').trimEnd().endsWith('}')) return join(dir, written);
  }
  return 'none written within 300 s';
}

/** The control plane's processes, for their CPU. */
function apiServerPid(): number {
  return findPid(join(cp.binDir, 'kube-apiserver'), cp.dir);
}

function etcdPid(): number {
  return findPid(join(cp.binDir, 'etcd'), seedDir ? join(seedDir, 'etcd') : join(cp.dir, 'etcd'));
}

/** Waits (at most a minute) until the API server uses under a tenth of a core over a second. */
async function apiServerQuiet(): Promise<void> {
  const pid = apiServerPid();
  const deadline = Date.now() + 60_000;
  let before = cpuMs(pid);
  while (Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 1000));
    const now = cpuMs(pid);
    if (now - before < 100) return;
    before = now;
  }
}

/** Where a start's time goes, from now to the syncer's metrics: when the pods were listed, who had the cores, and what the API server was asked. */
async function startBreakdown(kc: KubeConfig): Promise<(syncer: Syncer, metrics: string) => Promise<string>> {
  const apiServer = apiServerPid();
  const etcd = etcdPid();
  const [apiServerCpu, etcdCpu, requests] = [cpuMs(apiServer), cpuMs(etcd), await apiServerRequests(kc)];
  const started = Date.now();
  return async (syncer, metrics) => {
    const listed = parseSamples(metrics, ['outrigger_rbac_syncer_last_sync_timestamp_seconds']).find((s) => s.labels['resource'] === 'pods')?.value;
    const list = listed === undefined ? 'pods never listed' : `pods listed after ${(listed - started / 1000).toFixed(1)} s`;
    const cpu = `CPU: the syncer ${(cpuMs(syncer.process.pid) / 1000).toFixed(1)} s, kube-apiserver ${((cpuMs(apiServer) - apiServerCpu) / 1000).toFixed(1)} s, etcd ${((cpuMs(etcd) - etcdCpu) / 1000).toFixed(1)} s`;
    const asked = [...(await apiServerRequests(kc))].map(([key, n]) => [key, n - (requests.get(key) ?? 0)] as const).filter(([, n]) => n > 0);
    const top = asked.sort((a, b) => b[1] - a[1]).slice(0, 6).map(([key, n]) => `${n} ${key}`);
    return `${list}; ${cpu}; the API server answered ${top.join(', ')}`;
  };
}

/** The API server's answers so far by verb, resource and code, from its own counter (every client's, the bench's too). */
async function apiServerRequests(kc: KubeConfig): Promise<Map<string, number>> {
  const options = await getOptions(kc, '/metrics', 'text/plain');
  const text = await new Promise<string>((resolve, reject) => {
    const req = request(options, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => (res.statusCode === 200 ? resolve(Buffer.concat(chunks).toString('utf8')) : reject(new Error(`GET /metrics answered ${res.statusCode}`))));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
  const counts = new Map<string, number>();
  for (const { labels, value } of parseSamples(text, ['apiserver_request_total'])) {
    const resource = [labels['resource'], labels['subresource']].filter(Boolean).join('/');
    const key = `${labels['verb']} ${resource} ${labels['code']}`;
    counts.set(key, (counts.get(key) ?? 0) + value);
  }
  return counts;
}

/** Subjects the syncer says it bound (its gauge after the last reconcile); 0 while it does not answer. */
async function boundBySyncer(url: string): Promise<number> {
  const text = await fetch(`${url}/metrics`).then((r) => r.text()).catch(() => '');
  return parseSamples(text, ['outrigger_rbac_syncer_binding_subjects']).reduce((sum, s) => sum + s.value, 0);
}

/** Subjects of every binding of the profile, as the API server serves them. */
async function boundSubjects(rbac: RbacAuthorizationV1Api): Promise<number> {
  const list = await rbac.listClusterRoleBinding({ labelSelector: PROFILE_SELECTOR }).catch(() => undefined);
  return (list?.items ?? []).reduce((sum, b) => sum + (b.subjects?.length ?? 0), 0);
}

function bindingWrites(metrics: string, metric = 'outrigger_rbac_syncer_api_writes_total'): number {
  return parseSamples(metrics, [metric])
    .filter((s) => s.labels['kind'] === 'ClusterRoleBinding')
    .reduce((sum, s) => sum + s.value, 0);
}

/**
 * Where the syncer's memory is: the V8 heap (live and reserved) and outside it, from prom-client's
 * default metrics; and from /proc, the RSS in anonymous memory and in mapped files (Node's own code).
 */
function memory(metrics: string, pid: number): string {
  const value = (name: string) => (parseSamples(metrics, [name]).find((s) => s.name === name)?.value ?? Number.NaN) / MiB;
  const proc = (field: string) => (procStatusBytes(pid, field) / MiB).toFixed(0);
  return `RSS ${value('process_resident_memory_bytes').toFixed(0)} MiB (anonymous ${proc('RssAnon')}, files ${proc('RssFile')}): heap used ${value('nodejs_heap_size_used_bytes').toFixed(0)} of ${value('nodejs_heap_size_total_bytes').toFixed(0)} MiB, external ${value('nodejs_external_memory_bytes').toFixed(0)} MiB`;
}

/** Reconciles since start, from the syncer's histogram: how many, the mean, and the bucket holding the 99th percentile. */
function reconcileTimes(metrics: string): string {
  const samples = parseSamples(metrics, ['outrigger_rbac_syncer_reconcile_duration_seconds']);
  const count = samples.find((s) => s.name.endsWith('_count'))?.value ?? 0;
  const sum = samples.find((s) => s.name.endsWith('_sum'))?.value ?? 0;
  const buckets = samples.filter((s) => s.name.endsWith('_bucket')).map((s) => ({ le: Number(s.labels['le']), n: s.value }));
  const p99 = buckets.sort((a, b) => a.le - b.le).find((b) => b.n >= 0.99 * count)?.le ?? Number.NaN;
  return `${count} reconciles, mean ${((sum / Math.max(1, count)) * 1000).toFixed(1)} ms, p99 ≤ ${Number.isFinite(p99) ? `${p99 * 1000} ms` : '+Inf'}`;
}

function describe(config: SyncerConfig): string {
  const deployed = config.nodeOptions === DEPLOYED_NODE_OPTIONS ? ' (as deploy/base sets it)' : '';
  const list = config.podList === 'stream' ? 'streaming list' : `page size ${config.pageSize}`;
  const env = Object.entries(config.env).map(([k, v]) => `, ${k}=${v}`).join('');
  const which = config.root ? `the syncer of ${config.root}` : 'this syncer';
  return `${which}: ${list}, NODE_OPTIONS=${JSON.stringify(config.nodeOptions)}${deployed}${env}`;
}

/** The Synced condition of the reference AgentProfile, or the syncer log's last word (PROFILES_FILE has no status). */
async function syncerStatus(rbac: RbacAuthorizationV1Api): Promise<string | undefined> {
  const list = await rbac.listClusterRoleBinding({ labelSelector: PROFILE_SELECTOR }).catch(() => undefined);
  return `${list?.items.length ?? 0} binding(s) of the profile stored`;
}

function fmt(s: { median: number; min: number; max: number }, digits: number): string {
  return `${s.median.toFixed(digits)} [${s.min.toFixed(digits)}–${s.max.toFixed(digits)}]`;
}

function ratio(values: readonly number[], baseline: readonly number[], of = 'baseline'): string {
  return `${(spread(values).median / spread(baseline).median).toFixed(2)}× ${of}`;
}

async function retry<T>(work: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (err) {
      // 429s and timeouts under load; a create that already landed is a 409 and counts as done.
      if ((err as { code?: number }).code === 409) return undefined as T;
      if (attempt >= 5) throw err;
      await new Promise((r) => setTimeout(r, 200 * attempt));
    }
  }
}

