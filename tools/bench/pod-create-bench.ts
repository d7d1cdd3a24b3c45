/**
 * Benchmark (not a test): pod-create latency through a real kube-apiserver, as `kubectl apply` or a
 * ReplicaSet controller sees it. One bare control plane; one namespace per webhook, each selected by
 * its own MutatingWebhookConfiguration, all registered as deploy/base registers the injector (only
 * the name, the URL and the namespace differ): Outrigger's injector (started as the e2e suites start
 * it), the minimal node:https webhook of baseline-server.ts (twice, for the noise floor), agnhost's
 * /mutating-pods-sidecar (Go) over HTTP/1.1 as the API server calls a deployed webhook and over
 * HTTP/2 as it calls one at a loopback URL, and a namespace with none. Concurrent creators send the same opted-in pod to one
 * namespace at a time, in interleaved rounds; each round gives p50/p99 per namespace and what each
 * webhook adds over the namespace without one; the verdict compares the medians of the rounds. The
 * API server's own metrics, read around each batch, split the time between the webhook calls and
 * the rest of admission, and /proc gives each process's CPU.
 *
 *   npx nx run injector:build && node --import tsx --conditions development tools/bench/pod-create-bench.ts
 *     [--rounds 7] [--pods 300] [--concurrency 8] [--injector-node-options=<flags>]
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:https';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { parse } from 'yaml';
import { encodeCaBundle, INJECTION_LABEL_KEY, INJECTION_LABEL_VALUE, MUTATE_PATH } from '@outrigger/admission';
import { REFERENCE_PROFILE_FILE, referenceProfile } from '@outrigger/agent-profiles';
import { freePort, kubeConfigFrom, type ManagedProcess, startApp, startControlPlane } from '@outrigger/control-plane';
import { issueCertificate } from '@outrigger/pki';
import { deployedNodeOptions, readDeployFile } from '../deploy/render.js';
import { parseSamples, type Sample } from '../observability/exposition.js';
import { histogramDelta, histogramTotal, type HistogramTotal } from './exposition-values.js';
import { AGNHOST_SIDECAR_PATH, startAgnhost, startBaselineProcess } from './peers.js';
import { cpuMs, findPid } from './proc.js';
import { quantile, spread, type Spread } from './stats.js';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '7' },
    // pods per namespace per round
    pods: { type: 'string', default: '300' },
    concurrency: { type: 'string', default: '8' },
    'injector-node-options': { type: 'string', default: deployedNodeOptions('injector') },
  },
});
const ROUNDS = Number(values.rounds);
const PODS = Number(values.pods);
const CONCURRENCY = Number(values.concurrency);

// node-twin is a second minimal webhook: how far two equal servers' ratios swing in this run.
const WEBHOOKS = ['outrigger', 'node', 'node-twin', 'agnhost', 'agnhost-h2'] as const;
type Webhook = (typeof WEBHOOKS)[number];
type Target = Webhook | 'none';
const TARGETS: readonly Target[] = [...WEBHOOKS, 'none'];
// The peers of the verdict: a deployed webhook is called over HTTP/1.1.
const PEERS = ['node', 'agnhost'] as const;
const LABEL: Record<Target, string> = {
  outrigger: 'Outrigger injector',
  node: 'minimal node:https',
  'node-twin': 'minimal node:https, twin',
  agnhost: 'agnhost (Go), HTTP/1.1',
  'agnhost-h2': 'agnhost (Go), HTTP/2',
  none: 'no webhook',
};
// The webhook names the API server's metrics carry; Outrigger's is the deployed one.
const WEBHOOK_NAME: Record<Webhook, string> = {
  outrigger: 'inject.outrigger.dev',
  node: 'node-baseline.bench.outrigger.dev',
  'node-twin': 'node-twin.bench.outrigger.dev',
  agnhost: 'agnhost.bench.outrigger.dev',
  'agnhost-h2': 'agnhost-h2.bench.outrigger.dev',
};
// The container each webhook adds: how the bench checks that it took effect.
const AGENT: Record<Target, string | undefined> = { outrigger: 'xxl-agent', node: 'xxl-agent', 'node-twin': 'xxl-agent', agnhost: 'webhook-added-sidecar', 'agnhost-h2': 'webhook-added-sidecar', none: undefined };
const namespaceOf = (t: Target) => `bench-${t}`;

const optedIn = {
  'xxl-agent/enable': 'true',
  'xxl-agent/job-addr': 'http://xxl-job-admin.jobs:8080/xxl-job-admin',
  'xxl-agent/target-container': 'app',
  'xxl-agent/job-name': 'billing',
};
const podBody = (name: string) =>
  JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name, annotations: optedIn }, spec: { containers: [{ name: 'app', image: 'registry.example/app:1.0' }] } });

const processes: ManagedProcess[] = [];
const cp = await startControlPlane({ log: () => undefined });
const user = kubeConfigFrom(cp.kubeconfigPath).getCurrentUser();
const agent = new Agent({
  keepAlive: true,
  maxSockets: CONCURRENCY + 1,
  ca: cp.ca.cert,
  cert: Buffer.from(user?.certData ?? '', 'base64'),
  key: Buffer.from(user?.keyData ?? '', 'base64'),
});
try {
  const api = (method: string, path: string, body?: string) =>
    new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(`${cp.server}${path}`, { method, agent, headers: body ? { 'content-type': 'application/json' } : {} }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      });
      req.on('error', reject);
      req.end(body);
    });
  const must = async (method: string, path: string, body?: string) => {
    const res = await api(method, path, body);
    if (res.status >= 300) throw new Error(`${method} ${path}: HTTP ${res.status} ${res.body.slice(0, 300)}`);
    return res.body;
  };

  // ---- the webhooks ----------------------------------------------------------------------------------
  const dir = mkdtempSync(join(tmpdir(), 'pod-create-bench-'));
  const ca = issueCertificate({ commonName: 'bench-ca', usage: 'ca', lifetimeMs: 24 * 3600_000 });
  const serving = issueCertificate({ commonName: '127.0.0.1', usage: 'server', issuer: ca, lifetimeMs: 24 * 3600_000, ipAddresses: ['127.0.0.1'] });
  const certFile = join(dir, 'tls.crt');
  const keyFile = join(dir, 'tls.key');
  writeFileSync(certFile, serving.cert);
  writeFileSync(keyFile, serving.key);

  const port = {} as Record<Webhook, number>;
  for (const w of WEBHOOKS) port[w] = await freePort();
  const started = async (p: Promise<ManagedProcess>) => {
    const child = await p;
    processes.push(child);
    return child.pid;
  };
  const sidecarImage = referenceProfile().container.image;
  const pid: Record<Webhook | 'apiserver', number> = {
    outrigger: await started(
      startApp('injector', {
        env: { PORT: String(port.outrigger), PROFILES_FILE: REFERENCE_PROFILE_FILE, TLS_CERT_FILE: certFile, TLS_KEY_FILE: keyFile, POD_NAMESPACE: 'outrigger-system', NODE_OPTIONS: values['injector-node-options'] },
        readyUrl: `https://127.0.0.1:${port.outrigger}/readyz`,
        ca: ca.cert,
        logFile: join(dir, 'injector.log'),
      }),
    ),
    node: await started(startBaselineProcess({ port: port.node, certFile, keyFile, logFile: join(dir, 'baseline.log') })),
    'node-twin': await started(startBaselineProcess({ port: port['node-twin'], certFile, keyFile, logFile: join(dir, 'baseline-twin.log') })),
    agnhost: await started(startAgnhost({ port: port.agnhost, certFile, keyFile, logFile: join(dir, 'agnhost.log'), sidecarImage })),
    'agnhost-h2': await started(startAgnhost({ port: port['agnhost-h2'], certFile, keyFile, logFile: join(dir, 'agnhost-h2.log'), sidecarImage, http2: true })),
    apiserver: findPid('kube-apiserver', cp.dir),
  };
  const path: Record<Webhook, string> = { outrigger: MUTATE_PATH, node: MUTATE_PATH, 'node-twin': MUTATE_PATH, agnhost: AGNHOST_SIDECAR_PATH, 'agnhost-h2': AGNHOST_SIDECAR_PATH };

  // Each namespace carries the injection label; the webhooks tell them apart by name.
  for (const target of TARGETS) {
    const namespace = namespaceOf(target);
    await must('POST', '/api/v1/namespaces', JSON.stringify({ metadata: { name: namespace, labels: { [INJECTION_LABEL_KEY]: INJECTION_LABEL_VALUE } } }));
    // No controller-manager here to create it, and pods are not admitted without it.
    await must('POST', `/api/v1/namespaces/${namespace}/serviceaccounts`, JSON.stringify({ metadata: { name: 'default' } }));
  }
  interface Registration {
    metadata: { name: string };
    webhooks: { name: string; clientConfig: unknown; reinvocationPolicy?: string; namespaceSelector: { matchExpressions: unknown[] } }[];
  }
  const deployed = parse(readDeployFile('base/webhook/mutating-webhook-configuration.yaml')) as Registration;
  if (deployed.webhooks.length !== 1) throw new Error('deploy/base registers one webhook; the bench expects exactly one');
  for (const w of WEBHOOKS) {
    const registration = structuredClone(deployed);
    registration.metadata = { name: `bench-${w}` };
    const webhook = registration.webhooks[0] as Registration['webhooks'][number];
    webhook.name = WEBHOOK_NAME[w];
    webhook.clientConfig = { url: `https://127.0.0.1:${port[w]}${path[w]}`, caBundle: encodeCaBundle(ca.cert) };
    webhook.namespaceSelector.matchExpressions.push({ key: 'kubernetes.io/metadata.name', operator: 'In', values: [namespaceOf(w)] });
    await must('POST', '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations', JSON.stringify(registration));
  }
  // The API server picks up configurations asynchronously: wait until a dry run in each namespace is
  // mutated by its webhook and by no other.
  const containersOf = (body: string) => (JSON.parse(body) as { spec: { containers: { name: string }[] } }).spec.containers.map((c) => c.name);
  for (const target of TARGETS) {
    const expected = ['app', ...(AGENT[target] ? [AGENT[target]] : [])].join(',');
    for (let attempt = 0; ; attempt++) {
      const got = containersOf(await must('POST', `/api/v1/namespaces/${namespaceOf(target)}/pods?dryRun=All`, podBody('probe'))).join(',');
      if (got === expected) break;
      if (attempt > 150) throw new Error(`${namespaceOf(target)}: a created pod has containers ${got}, expected ${expected}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  // ---- measuring -------------------------------------------------------------------------------------
  const scrape = async (): Promise<Sample[]> =>
    parseSamples(await must('GET', '/metrics'), ['apiserver_admission_webhook_admission_duration_seconds', 'apiserver_admission_step_admission_duration_seconds', 'apiserver_admission_controller_admission_duration_seconds']);
  const admitted = { operation: 'CREATE', rejected: 'false' };
  interface Admission {
    readonly step: HistogramTotal;
    readonly validateStep: HistogramTotal;
    readonly mutatingWebhookPlugin: HistogramTotal;
    readonly webhooks: Record<Webhook, HistogramTotal>;
  }
  const admission = (samples: Sample[]): Admission => ({
    step: histogramTotal(samples, 'apiserver_admission_step_admission_duration_seconds', { ...admitted, type: 'admit' }),
    validateStep: histogramTotal(samples, 'apiserver_admission_step_admission_duration_seconds', { ...admitted, type: 'validate' }),
    mutatingWebhookPlugin: histogramTotal(samples, 'apiserver_admission_controller_admission_duration_seconds', { ...admitted, type: 'admit', name: 'MutatingAdmissionWebhook' }),
    webhooks: Object.fromEntries(WEBHOOKS.map((w) => [w, histogramTotal(samples, 'apiserver_admission_webhook_admission_duration_seconds', { ...admitted, type: 'admit', name: WEBHOOK_NAME[w] })])) as Record<Webhook, HistogramTotal>,
  });

  /** Creates PODS pods in the target's namespace from CONCURRENCY creators; ms per create. */
  const batch = async (target: Target, tag: string): Promise<number[]> => {
    const ms: number[] = [];
    let next = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < PODS) {
          const body = podBody(`${tag}-${next++}`);
          const sent = performance.now();
          const res = await api('POST', `/api/v1/namespaces/${namespaceOf(target)}/pods`, body);
          ms.push(performance.now() - sent);
          if (res.status !== 201) throw new Error(`${namespaceOf(target)}: pod create answered ${res.status} ${res.body.slice(0, 300)}`);
        }
      }),
    );
    return ms;
  };

  interface Batch {
    readonly ms: readonly number[];
    readonly p50: number;
    readonly p99: number;
    /** ms per pod create in the admit step, in the validate step and in the mutating-webhook plugin (all its calls). */
    readonly admitMs: number;
    readonly validateMs: number;
    readonly pluginMs: number;
    /** Calls of this namespace's webhook per pod create, and the API server's mean ms per call. */
    readonly callsPerPod: number;
    readonly msPerCall: number;
    /** CPU the webhook's process spent per call, and the API server per pod create (from /proc). */
    readonly serverCpuUsPerCall: number;
    readonly apiserverCpuMsPerPod: number;
  }
  const perCallMs = (h: HistogramTotal) => (h.count > 0 ? (h.sum * 1000) / h.count : Number.NaN);
  const perPodMs = (h: HistogramTotal) => (h.sum * 1000) / PODS;
  const measure = async (target: Target, tag: string, before: Admission): Promise<[Batch, Admission]> => {
    const server = target === 'none' ? undefined : pid[target];
    const cpuBefore = { server: server ? cpuMs(server) : 0, apiserver: cpuMs(pid.apiserver) };
    const ms = await batch(target, tag);
    const cpu = { server: server ? cpuMs(server) - cpuBefore.server : Number.NaN, apiserver: cpuMs(pid.apiserver) - cpuBefore.apiserver };
    const after = admission(await scrape());
    const call = target === 'none' ? { count: 0, sum: 0 } : histogramDelta(after.webhooks[target], before.webhooks[target]);
    return [
      {
        ms,
        p50: quantile(ms, 0.5),
        p99: quantile(ms, 0.99),
        admitMs: perPodMs(histogramDelta(after.step, before.step)),
        validateMs: perPodMs(histogramDelta(after.validateStep, before.validateStep)),
        pluginMs: perPodMs(histogramDelta(after.mutatingWebhookPlugin, before.mutatingWebhookPlugin)),
        callsPerPod: call.count / PODS,
        msPerCall: perCallMs(call),
        serverCpuUsPerCall: (cpu.server * 1000) / call.count,
        apiserverCpuMsPerPod: cpu.apiserver / PODS,
      },
      after,
    ];
  };

  const f = (n: number, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : '–');
  const fs = (s: Spread, digits = 1) => `${f(s.median, digits)} (${f(s.min, digits)}–${f(s.max, digits)})`;
  console.log(`kube-apiserver ${cp.version}; ${CONCURRENCY} concurrent creators, ${PODS} pods per namespace per round, ${ROUNDS} rounds after one warm-up round; node ${process.version}`);
  console.log(`injector NODE_OPTIONS=${JSON.stringify(values['injector-node-options'])}; every webhook registered as deploy/base registers the injector (reinvocationPolicy ${deployed.webhooks[0]?.reinvocationPolicy})`);
  console.log(`machine: ${availableParallelism()} CPUs, load average ${loadavg().map((n) => n.toFixed(2)).join(' ')}\n`);

  const rounds: Record<Target, Batch>[] = [];
  let last = admission(await scrape());
  for (let round = -1; round < ROUNDS; round++) {
    // Rotated each round, so no namespace always follows the same one.
    const order = TARGETS.map((_, i) => TARGETS[(i + round + 1) % TARGETS.length] as Target);
    const results = {} as Record<Target, Batch>;
    for (const target of order) [results[target], last] = await measure(target, `r${round + 1}`, last);
    const line = TARGETS.map((t) => `${t} ${f(results[t].p50)}/${f(results[t].p99)}`).join('  ');
    if (round < 0) {
      console.log(`warm-up round, p50/p99 ms: ${line}`);
      continue;
    }
    rounds.push(results);
    console.log(`round ${round + 1}, p50/p99 ms: ${line}   (order: ${order.join(' ')})`);
  }

  const over = (pick: (r: Record<Target, Batch>) => number) => spread(rounds.map(pick));
  const added = (t: Target, p: 'p50' | 'p99') => over((r) => r[t][p] - r.none[p]);
  // p99 of every round's creates together: steadier than one round's 3rd-slowest create.
  const pooled = (t: Target, q: number) => quantile(rounds.flatMap((r) => r[t].ms), q);
  console.log(`\npod-create latency, ms: median of ${ROUNDS} rounds (min–max); "added" is over the namespace without a webhook in the same round`);
  console.log(`| webhook on the namespace | p50 | p99 | added p50 | added p99 | p99 of all rounds' creates | webhook calls per pod | ms per call (API server) | admit step per pod | of it, mutating-webhook plugin | validate step | webhook CPU per call, µs | API server CPU per pod |`);
  console.log(`|---|---|---|---|---|---|---|---|---|---|---|---|---|`);
  for (const t of TARGETS) {
    const webhook = t !== 'none';
    const cells = [
      fs(over((r) => r[t].p50)),
      fs(over((r) => r[t].p99)),
      webhook ? fs(added(t, 'p50')) : '',
      webhook ? fs(added(t, 'p99')) : '',
      f(pooled(t, 0.99)),
      webhook ? fs(over((r) => r[t].callsPerPod), 2) : '',
      webhook ? fs(over((r) => r[t].msPerCall), 2) : '',
      fs(over((r) => r[t].admitMs), 2),
      fs(over((r) => r[t].pluginMs), 2),
      fs(over((r) => r[t].validateMs), 2),
      webhook ? fs(over((r) => r[t].serverCpuUsPerCall), 0) : '',
      fs(over((r) => r[t].apiserverCpuMsPerPod), 2),
    ];
    console.log(`| ${LABEL[t]} | ${cells.join(' | ')} |`);
  }

  // Ratios of the rounds' medians: a round's added p99 is a difference of two noisy figures, near
  // zero at times, so per-round ratios swing wildly.
  const ratio = (a: Target, b: Target, p: 'p50' | 'p99') => added(a, p).median / added(b, p).median;
  console.log(`\nadded latency, Outrigger / peer (medians of the rounds); target ≤ 1.00×:`);
  for (const peer of PEERS) {
    for (const p of ['p50', 'p99'] as const) {
      const r = ratio('outrigger', peer, p);
      console.log(`  vs ${LABEL[peer].padEnd(24)} ${p}: ${f(r, 2)}×   ${r <= 1 ? 'MET' : 'MISSED'}`);
    }
    const pooledAdded = (t: Target) => pooled(t, 0.99) - pooled('none', 0.99);
    console.log(`  vs ${LABEL[peer].padEnd(24)} p99 of all rounds' creates, added: ${f(pooledAdded('outrigger') / pooledAdded(peer), 2)}×`);
    console.log(`  vs ${LABEL[peer].padEnd(24)} the API server's ms per webhook call: ${f(over((r) => r.outrigger.msPerCall).median / over((r) => r[peer].msPerCall).median, 2)}×`);
  }
  const twin = (p: 'p50' | 'p99') => f(ratio('node-twin', 'node', p), 2);
  console.log(`two equal minimal webhooks, twin / first (the noise floor of the ratios above): added p50 ${twin('p50')}×, p99 ${twin('p99')}×, ms per call ${f(over((r) => r['node-twin'].msPerCall).median / over((r) => r.node.msPerCall).median, 2)}×`);
  console.log(`HTTP/2 vs HTTP/1.1 to agnhost, added latency: p50 ${f(ratio('agnhost-h2', 'agnhost', 'p50'), 2)}×, p99 ${f(ratio('agnhost-h2', 'agnhost', 'p99'), 2)}×`);
} finally {
  agent.destroy();
  for (const p of processes.reverse()) await p.stop();
  await cp.stop();
}
