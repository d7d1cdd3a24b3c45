/**
 * Benchmark (not a test): pod-create latency through a real kube-apiserver, as `kubectl apply` or a
 * ReplicaSet controller sees it. One bare control plane; one namespace per webhook, each selected by
 * its own MutatingWebhookConfiguration, all registered as deploy/base registers the injector (only
 * the name, the URL and the namespace differ): Outrigger's injector (started as the e2e suites start
 * it); independent node:https webhooks with their own few lines of injection and none of our code
 * (independent-webhook.ts): one adding exactly what the injector adds (read from the injector's own
 * result at start, and checked to give the same pod), its twin (the noise floor), one adding a
 * minimal container; the node:https webhook on Outrigger's admission core (baseline-server.ts);
 * agnhost's /mutating-pods-sidecar (Go) over HTTP/1.1 as the API server calls a deployed webhook;
 * and a namespace with none. The injector's namespace also has the install's policy on pod CREATE
 * (outrigger-forged-agent, the reference AgentProfile its parameter). A pod that does not opt in is created in the injector's namespace too (the API
 * server must not call the webhook for it). Concurrent creators send the same pod to one
 * namespace at a time, in interleaved rounds; each round gives p50/p99 per namespace and what each
 * webhook adds over the namespace without one; the verdict compares the medians of the rounds. The
 * API server's own metrics, read around each batch, split the time between the webhook calls and
 * the rest of admission, and /proc gives each process's CPU.
 *
 *   npx nx run injector:build && node --import tsx --conditions development tools/bench/pod-create-bench.ts
 *     [--rounds 7] [--pods 300] [--concurrency 8] [--injector-node-options=<flags>] [--peer-node-args=<flags>]
 *     [--pod-policies forged-agent | none]
 *
 * --peer-node-args gives the Node peers (the core on node:https, the independent ones) Node's own flags,
 * e.g. "--cpu-prof --cpu-prof-dir=DIR" (each peer writes its profile when the bench stops it).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:https';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { parse } from 'yaml';
import { encodeCaBundle, INJECTION_LABEL_KEY, INJECTION_LABEL_VALUE, MUTATE_PATH } from '@outrigger/admission';
import { AGENT_PROFILE_API_VERSION, AGENT_PROFILE_PLURAL, REFERENCE_PROFILE_FILE, referenceProfile } from '@outrigger/agent-profiles';
import { freePort, kubeConfigFrom, type ManagedProcess, startApp, startControlPlane, deployedNodeOptions, readDeployFile, scratchDirUntilExit } from '@outrigger/control-plane';
import { forgedAgentBinding, forgedAgentPolicy } from '@outrigger/install';
import { issueCertificate } from '@outrigger/pki';
import { parseSamples, type Sample } from '../observability/exposition.js';
import { histogramDelta, histogramTotal, type HistogramTotal } from './exposition-values.js';
import type { Injection } from './independent-webhook.js';
import { observedInjection, type StoredPod, withoutIdentity } from './observed-injection.js';
import { AGNHOST_SIDECAR_PATH, startAgnhost, startBaselineProcess, startIndependentPeer } from './peers.js';
import { cpuMs, findPid } from './proc.js';
import { median, noiseFloor, quantile, spread, type Spread } from './stats.js';
import { holdBenchLock } from './bench-lock.js';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '7' },
    // pods per namespace per round
    pods: { type: 'string', default: '300' },
    concurrency: { type: 'string', default: '8' },
    'injector-node-options': { type: 'string', default: deployedNodeOptions('injector') },
    'peer-node-args': { type: 'string', default: '' },
    // The install's policy judging pod CREATE, in the injector's namespace; "none" to see what it costs.
    'pod-policies': { type: 'string', default: 'forged-agent' },
  },
});
const ROUNDS = Number(values.rounds);
const PODS = Number(values.pods);
const CONCURRENCY = Number(values.concurrency);
const PEER_NODE_ARGS = values['peer-node-args'].split(/\s+/).filter(Boolean);
const POD_POLICIES = { 'forged-agent': [forgedAgentPolicy(), forgedAgentBinding()] } as const;
const podPolicies = values['pod-policies'] === 'none' ? [] : values['pod-policies'].split(',');
for (const name of podPolicies) {
  if (!(name in POD_POLICIES)) throw new Error(`--pod-policies: unknown policy "${name}" (known: ${Object.keys(POD_POLICIES).join(', ')}, or none)`);
}

// same-twin is a second, identical same-container peer: how far two equal servers' ratios swing in this run.
const WEBHOOKS = ['outrigger', 'same', 'same-twin', 'minimal', 'core', 'agnhost'] as const;
type Webhook = (typeof WEBHOOKS)[number];
type Target = Webhook | 'not-opted-in' | 'none';
const TARGETS: readonly Target[] = ['outrigger', 'not-opted-in', 'same', 'same-twin', 'minimal', 'core', 'agnhost', 'none'];
// The verdict's peer, and the others Outrigger is compared with.
const PEER = 'same';
const TARGET_RATIO = 1.1;
const OTHERS = ['minimal', 'core', 'agnhost'] as const;
const LABEL: Record<Target, string> = {
  outrigger: 'Outrigger injector',
  'not-opted-in': 'Outrigger injector, pod not opted in',
  same: 'independent node:https, same container',
  'same-twin': 'independent node:https, same container, twin',
  minimal: 'independent node:https, minimal container',
  core: "node:https on Outrigger's admission core",
  agnhost: 'agnhost (Go), HTTP/1.1',
  none: 'no webhook',
};
// The webhook names the API server's metrics carry; Outrigger's is the deployed one.
const WEBHOOK_NAME: Record<Webhook, string> = {
  outrigger: 'inject.outrigger.dev',
  same: 'same.bench.outrigger.dev',
  'same-twin': 'same-twin.bench.outrigger.dev',
  minimal: 'minimal.bench.outrigger.dev',
  core: 'core.bench.outrigger.dev',
  agnhost: 'agnhost.bench.outrigger.dev',
};
/** The webhook registered for a target's namespace (the pod that does not opt in goes to the injector's). */
const webhookOf = (t: Target): Webhook | undefined => (t === 'none' ? undefined : t === 'not-opted-in' ? 'outrigger' : t);
// The container each target's pods get: how the bench checks that the webhook took effect.
const AGENT: Record<Target, string | undefined> = { outrigger: 'xxl-agent', 'not-opted-in': undefined, same: 'xxl-agent', 'same-twin': 'xxl-agent', minimal: 'xxl-agent', core: 'xxl-agent', agnhost: 'webhook-added-sidecar', none: undefined };
const namespaceOf = (t: Target) => `bench-${webhookOf(t) ?? 'none'}`;

const optedIn = {
  'xxl-agent/enable': 'true',
  'xxl-agent/job-addr': 'http://xxl-job-admin.jobs:8080/xxl-job-admin',
  'xxl-agent/target-container': 'app',
  'xxl-agent/job-name': 'billing',
};
const podBody = (name: string, target: Target) =>
  JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name, ...(target === 'not-opted-in' ? {} : { annotations: optedIn }) }, spec: { containers: [{ name: 'app', image: 'registry.example/app:1.0' }] } });

holdBenchLock();
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
  const dir = scratchDirUntilExit(tmpdir(), 'pod-create-bench-');
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
  const pid = { apiserver: findPid('kube-apiserver', cp.dir) } as Record<Webhook | 'apiserver', number>;
  pid.outrigger = await started(
    startApp('injector', {
      env: { PORT: String(port.outrigger), PROFILES_FILE: REFERENCE_PROFILE_FILE, TLS_CERT_FILE: certFile, TLS_KEY_FILE: keyFile, POD_NAMESPACE: 'outrigger-system', NODE_OPTIONS: values['injector-node-options'] },
      readyUrl: `https://127.0.0.1:${port.outrigger}/readyz`,
      ca: ca.cert,
      logFile: join(dir, 'injector.log'),
    }),
  );
  pid.core = await started(startBaselineProcess({ port: port.core, certFile, keyFile, logFile: join(dir, 'baseline.log'), nodeArgs: PEER_NODE_ARGS }));
  pid.agnhost = await started(startAgnhost({ port: port.agnhost, certFile, keyFile, logFile: join(dir, 'agnhost.log'), sidecarImage }));
  const path: Record<Webhook, string> = { outrigger: MUTATE_PATH, same: MUTATE_PATH, 'same-twin': MUTATE_PATH, minimal: MUTATE_PATH, core: MUTATE_PATH, agnhost: AGNHOST_SIDECAR_PATH };

  // Each namespace carries the injection label; the webhooks tell them apart by name.
  for (const namespace of new Set(TARGETS.map(namespaceOf))) {
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
  const register = async (w: Webhook) => {
    const registration = structuredClone(deployed);
    registration.metadata = { name: `bench-${w}` };
    const webhook = registration.webhooks[0] as Registration['webhooks'][number];
    webhook.name = WEBHOOK_NAME[w];
    webhook.clientConfig = { url: `https://127.0.0.1:${port[w]}${path[w]}`, caBundle: encodeCaBundle(ca.cert) };
    webhook.namespaceSelector.matchExpressions.push({ key: 'kubernetes.io/metadata.name', operator: 'In', values: [namespaceOf(w)] });
    await must('POST', '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations', JSON.stringify(registration));
  };
  // The API server picks up configurations asynchronously: wait until a dry run in each namespace is
  // mutated by its webhook and by no other; the pod as created.
  const dryRun = async (target: Target): Promise<{ pod: StoredPod; bytes: number }> => {
    const expected = ['app', ...(AGENT[target] ? [AGENT[target]] : [])].join(',');
    for (let attempt = 0; ; attempt++) {
      const body = await must('POST', `/api/v1/namespaces/${namespaceOf(target)}/pods?dryRun=All`, podBody('probe', target));
      const pod = JSON.parse(body) as StoredPod;
      const got = pod.spec.containers.map((c) => c.name).join(',');
      if (got === expected) return { pod, bytes: body.length };
      if (attempt > 150) throw new Error(`${namespaceOf(target)}: a created pod has containers ${got}, expected ${expected}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  };
  for (const w of ['outrigger', 'core', 'agnhost'] as const) await register(w);

  // Outrigger's install also judges each pod CREATE in a labelled namespace with an admission policy,
  // once per AgentProfile: part of what it costs, so its namespace has it and no other.
  await must('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', JSON.stringify(parse(readDeployFile('base/crd/agentprofiles.outrigger.dev.yaml'))));
  const profiles = `/apis/${AGENT_PROFILE_API_VERSION}/${AGENT_PROFILE_PLURAL}`;
  for (let attempt = 0; (await api('GET', profiles)).status !== 200; attempt++) {
    if (attempt > 150) throw new Error(`${profiles}: the AgentProfile CRD is not served`);
    await new Promise((r) => setTimeout(r, 200));
  }
  await must('POST', profiles, JSON.stringify(parse(readFileSync(REFERENCE_PROFILE_FILE, 'utf8'))));
  for (const [policy, binding] of podPolicies.map((name) => POD_POLICIES[name as keyof typeof POD_POLICIES])) {
    const selector = binding.spec.matchResources.namespaceSelector;
    const onlyOutrigger = { ...selector, matchExpressions: [...(selector?.matchExpressions ?? []), { key: 'kubernetes.io/metadata.name', operator: 'In', values: [namespaceOf('outrigger')] }] };
    await must('POST', '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies', JSON.stringify(policy));
    await must('POST', '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings', JSON.stringify({ ...binding, spec: { ...binding.spec, matchResources: { namespaceSelector: onlyOutrigger } } }));
  }
  // The API server loads policies asynchronously: wait until it judges a dry run in the namespace.
  const judged = async () => {
    const forgedPod = JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'probe' }, spec: { containers: [{ name: AGENT.outrigger, image: 'registry.example/app:1.0' }] } });
    const forged = await api('POST', `/api/v1/namespaces/${namespaceOf('outrigger')}/pods?dryRun=All`, forgedPod);
    return (forged.status === 422) === podPolicies.includes('forged-agent');
  };
  for (let attempt = 0; !(await judged()); attempt++) {
    if (attempt > 150) throw new Error(`${namespaceOf('outrigger')}: the install's pod policies do not judge its pods`);
    await new Promise((r) => setTimeout(r, 200));
  }

  // The independent peers: the same-container one adds exactly what the injector's answer added to
  // the pod (read from the two pods, not from a second copy of the profile); the minimal one, a container.
  const plain = (await dryRun('none')).pod;
  const injection = observedInjection(plain, (await dryRun('outrigger')).pod);
  const minimal: Injection = { containers: [{ name: 'xxl-agent', image: sidecarImage } as { name: string }] };
  const injectionFile = (name: string, value: Injection) => {
    const file = join(dir, `${name}-injection.json`);
    writeFileSync(file, JSON.stringify(value));
    return file;
  };
  const same = injectionFile('same', injection);
  pid.same = await started(startIndependentPeer('same', { port: port.same, certFile, keyFile, logFile: join(dir, 'same.log'), injectionFile: same, nodeArgs: PEER_NODE_ARGS }));
  pid['same-twin'] = await started(startIndependentPeer('same-twin', { port: port['same-twin'], certFile, keyFile, logFile: join(dir, 'same-twin.log'), injectionFile: same, nodeArgs: PEER_NODE_ARGS }));
  pid.minimal = await started(startIndependentPeer('minimal', { port: port.minimal, certFile, keyFile, logFile: join(dir, 'minimal.log'), injectionFile: injectionFile('minimal', minimal), nodeArgs: PEER_NODE_ARGS }));
  if (PEER_NODE_ARGS.length > 0) console.log(`  the Node peers run with ${PEER_NODE_ARGS.join(' ')}; their pids: core ${pid.core}, same ${pid.same}, same-twin ${pid['same-twin']}, minimal ${pid.minimal}`);
  for (const w of ['same', 'same-twin', 'minimal'] as const) await register(w);
  const created = {} as Record<Target, { pod: StoredPod; bytes: number }>;
  for (const target of TARGETS) created[target] = await dryRun(target);
  // The peer's pod is the injector's pod: the comparison is of equal work.
  for (const twin of ['same', 'same-twin'] as const) {
    if (JSON.stringify(withoutIdentity(created[twin].pod)) !== JSON.stringify(withoutIdentity(created.outrigger.pod))) throw new Error(`the ${twin} peer's pod differs from the injector's`);
  }

  // What each webhook answers for the pod as the API server sends it, and the pod it makes: sizes.
  const answer = async (w: Webhook) => {
    const review = { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: { uid: '00000000-0000-0000-0000-000000000000', kind: { group: '', version: 'v1', kind: 'Pod' }, resource: { group: '', version: 'v1', resource: 'pods' }, requestKind: { group: '', version: 'v1', kind: 'Pod' }, requestResource: { group: '', version: 'v1', resource: 'pods' }, name: 'probe', namespace: namespaceOf(w), operation: 'CREATE', userInfo: { username: 'bench' }, object: plain, oldObject: null, dryRun: false, options: { apiVersion: 'meta.k8s.io/v1', kind: 'CreateOptions' } } };
    const body = await new Promise<string>((resolve, reject) => {
      const req = request(`https://127.0.0.1:${port[w]}${path[w]}`, { method: 'POST', ca: ca.cert, headers: { 'content-type': 'application/json' } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
      });
      req.on('error', reject);
      req.end(JSON.stringify(review));
    });
    const response = (JSON.parse(body) as { response?: { patch?: string; auditAnnotations?: object; warnings?: unknown[] } }).response ?? {};
    const patch = response.patch ? Buffer.from(response.patch, 'base64').toString('utf8') : '[]';
    return { bytes: body.length, patchBytes: patch.length, ops: (JSON.parse(patch) as unknown[]).length, audit: Object.keys(response.auditAnnotations ?? {}).length, warnings: (response.warnings ?? []).length };
  };
  const sizes = {} as Record<Webhook, Awaited<ReturnType<typeof answer>>>;
  for (const w of WEBHOOKS) sizes[w] = await answer(w);

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
          const body = podBody(`${tag}-${next++}`, target);
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
    const webhook = webhookOf(target);
    const server = webhook ? pid[webhook] : undefined;
    const cpuBefore = { server: server ? cpuMs(server) : 0, apiserver: cpuMs(pid.apiserver) };
    const ms = await batch(target, tag);
    const cpu = { server: server ? cpuMs(server) - cpuBefore.server : Number.NaN, apiserver: cpuMs(pid.apiserver) - cpuBefore.apiserver };
    const after = admission(await scrape());
    const call = webhook ? histogramDelta(after.webhooks[webhook], before.webhooks[webhook]) : { count: 0, sum: 0 };
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
  console.log(`the injector's namespace only: the pod-CREATE policies ${podPolicies.join(', ') || 'none'}`);
  console.log(`machine: ${availableParallelism()} CPUs, load average ${loadavg().map((n) => n.toFixed(2)).join(' ')}\n`);

  const rounds: Record<Target, Batch>[] = [];
  let last = admission(await scrape());
  for (let round = -1; round < ROUNDS; round++) {
    // Rotated each round, so no namespace always follows the same one.
    const order = TARGETS.map((_, i) => TARGETS[(i + round + 1) % TARGETS.length] as Target);
    const results = {} as Record<Target, Batch>;
    for (const target of order) [results[target], last] = await measure(target, `${target}-r${round + 1}`, last);
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
    const webhook = webhookOf(t) !== undefined;
    const cells = [
      fs(over((r) => r[t].p50)),
      fs(over((r) => r[t].p99)),
      t === 'none' ? '' : fs(added(t, 'p50')),
      t === 'none' ? '' : fs(added(t, 'p99')),
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

  // Sizes: what each webhook answers for the pod as the API server sends it, and the pod created.
  console.log(`\n| webhook on the namespace | answer, bytes | patch, bytes | patch operations | audit annotations | warnings | created pod, bytes |`);
  console.log(`|---|---|---|---|---|---|---|`);
  for (const t of TARGETS) {
    const w = t === 'not-opted-in' ? undefined : webhookOf(t);
    const size = w ? sizes[w] : undefined;
    const cells = size ? [size.bytes, size.patchBytes, size.ops, size.audit, size.warnings] : ['', '', '', '', ''];
    console.log(`| ${LABEL[t]} | ${cells.join(' | ')} | ${created[t].bytes} |`);
  }

  // Ratios of the rounds' medians: a round's added p99 is a difference of two noisy figures, near
  // zero at times, so per-round ratios swing wildly.
  const ratio = (a: Target, b: Target, p: 'p50' | 'p99') => added(a, p).median / added(b, p).median;
  const perRound = (a: Target, b: Target) => rounds.map((r) => (r[a].p50 - r.none.p50) / (r[b].p50 - r.none.p50));
  const verdict = ratio('outrigger', PEER, 'p50');
  // The twin's per-round ratios show how far two equal servers land apart in this run: the verdict
  // stands when Outrigger's distance from the target is larger than that.
  const twinRounds = perRound('same-twin', PEER);
  const noise = noiseFloor(ratio('same-twin', PEER, 'p50'), twinRounds);
  const gap = Math.abs(verdict - TARGET_RATIO);
  console.log(`\nadded p50, Outrigger / ${LABEL[PEER]} (medians of the rounds): ${f(verdict, 2)}×, target ≤ ${TARGET_RATIO.toFixed(2)}×: ${verdict <= TARGET_RATIO ? 'MET' : 'MISSED'}`);
  console.log(`  per round: ${perRound('outrigger', PEER).map((x) => f(x, 2)).join(' ')} (median ${f(median(perRound('outrigger', PEER)), 2)}×)`);
  console.log(`  noise floor, twin / first: ${f(ratio('same-twin', PEER, 'p50'), 2)}× (medians); per round ${twinRounds.map((x) => f(x, 2)).join(' ')}: ±${f(noise, 2)}`);
  console.log(`  ${gap > noise ? 'DECIDED' : 'UNDECIDED'}: the distance from the target (${f(gap, 2)}) is ${gap > noise ? 'wider' : 'not wider'} than the noise floor (${f(noise, 2)})${gap > noise ? '' : '; run more rounds'}`);
  console.log(`  p99: ${f(ratio('outrigger', PEER, 'p99'), 2)}× (twin ${f(ratio('same-twin', PEER, 'p99'), 2)}×); the API server's ms per webhook call: ${f(over((r) => r.outrigger.msPerCall).median / over((r) => r[PEER].msPerCall).median, 2)}× (twin ${f(over((r) => r['same-twin'].msPerCall).median / over((r) => r[PEER].msPerCall).median, 2)}×)`);
  for (const other of OTHERS) console.log(`added p50, Outrigger / ${LABEL[other]}: ${f(ratio('outrigger', other, 'p50'), 2)}×, p99 ${f(ratio('outrigger', other, 'p99'), 2)}×`);
  const skipped = over((r) => r['not-opted-in'].callsPerPod);
  console.log(`pod not opted in, in Outrigger's namespace: ${f(skipped.max, 2)} webhook calls per create at most (must be 0: ${skipped.max === 0 ? 'MET' : 'MISSED'}), added p50 ${fs(added('not-opted-in', 'p50'))} ms`);
} finally {
  agent.destroy();
  // As the kubelet would (the injector drains for 5 s), so that --cpu-prof profiles get written.
  for (const p of processes.reverse()) await p.stop(30_000);
  await cp.stop();
}
