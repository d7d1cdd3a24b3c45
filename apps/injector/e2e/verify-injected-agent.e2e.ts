import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { AdmissionregistrationV1Api, CoreV1Api, type V1Pod } from '@kubernetes/client-node';
import { applyPatchCopy, buildMutatingWebhookConfiguration, decodePatch, encodeCaBundle, INJECTION_LABEL_KEY, INJECTION_LABEL_VALUE, type JsonObject, parseAdmissionReview, reviewResponse } from '@outrigger/admission';
import { type AgentProfile, parseAgentProfile, parseProfiles, REFERENCE_PROFILE_FILE } from '@outrigger/agent-profiles';
import { createTestNamespace, kubeConfigFrom } from '@outrigger/control-plane';
import { canonicalQuantity, sidecarExtension, verifyInjectedAgent } from '@outrigger/sidecar';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startInjector, type RunningInjector } from './injector-process.js';
import { registerWebhook, unregisterWebhook, type WebhookProbe } from './webhook-registration.js';

// verifyInjectedAgent against pods as a real kube-apiserver stores them: every agent the webhook
// injects verifies, and a copy differing in one field, created where no webhook runs, does not.
const cp = inject('controlPlane');
const kc = kubeConfigFrom(cp.kubeconfigPath);
const admissionApi = kc.makeApiClient(AdmissionregistrationV1Api);
const core = kc.makeApiClient(CoreV1Api);
let webhookProbe: WebhookProbe | undefined;
const enabled = { [INJECTION_LABEL_KEY]: INJECTION_LABEL_VALUE };
const webhookName = `outrigger-verify-${randomBytes(3).toString('hex')}`;
const CONFIG_AGENT_FILE = new URL('../../../libs/admission/fixtures/profiles/config-agent.yaml', import.meta.url);
const PROFILES_TEXT = [REFERENCE_PROFILE_FILE, new URL('fixtures/verify-profiles.yaml', import.meta.url), CONFIG_AGENT_FILE].map((file) => readFileSync(file, 'utf8')).join('\n---\n');
let injector: RunningInjector;

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- API objects, read field by field
type Pod = any;

function kubectl(args: readonly string[], input?: string): string {
  try {
    return execFileSync(join(cp.binDir, 'kubectl'), ['--kubeconfig', cp.kubeconfigPath, ...args], { encoding: 'utf8', input, stdio: ['pipe', 'pipe', 'pipe'] });
  } catch (error) {
    const e = error as { stderr?: string; message: string };
    throw new Error(`kubectl ${args.join(' ')}: ${e.stderr ?? e.message}`);
  }
}

/** Creates the pod as given (JSON, no client model in between) and returns it as stored. */
function createPod(namespace: string, pod: Pod): Pod {
  kubectl(['create', '-n', namespace, '-f', '-'], JSON.stringify(pod));
  return JSON.parse(kubectl(['get', 'pod', '-n', namespace, pod.metadata.name, '-o', 'json']));
}

function createError(namespace: string, pod: Pod): string {
  try {
    createPod(namespace, pod);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('the create succeeded');
}

const profiles = (() => {
  const parsed = parseProfiles(PROFILES_TEXT);
  if (!parsed.ok) throw new Error(parsed.error);
  return new Map(parsed.value.map((profile) => [profile.name, profile]));
})();

function profile(name: string): AgentProfile {
  const found = profiles.get(name);
  if (!found) throw new Error(`no profile ${name}`);
  return found;
}

const xxlJob = { 'xxl-agent/enable': 'true', 'xxl-agent/job-addr': 'http://xxl-job-admin.jobs:8080/xxl-job-admin', 'xxl-agent/target-container': 'app', 'xxl-agent/job-name': 'billing' };

function pod(name: string, annotations: Record<string, string>, spec: JsonObject = {}): Pod {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, labels: { app: 'web' }, annotations }, spec: { containers: [{ name: 'app', image: 'registry.example.com/app:1.0' }], ...spec } };
}

/** A profile of the files with its spec changed, parsed again as the services parse it. */
function profileWith(name: string, change: (spec: Pod) => void): AgentProfile {
  const { name: _name, ...spec } = structuredClone(profile(name)) as Pod;
  change(spec);
  const parsed = parseAgentProfile({ metadata: { name }, spec });
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.value;
}

/** The pod as the webhook would send it on, injected offline (no API server defaults yet). */
function injectInto(raw: Pod, agentProfile: AgentProfile): Pod {
  const review = { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: { uid: '1', kind: { group: '', version: 'v1', kind: 'Pod' }, resource: { group: '', version: 'v1', resource: 'pods' }, operation: 'CREATE', namespace: 'n', userInfo: {}, object: raw } };
  raw.metadata.annotations[`${agentProfile.annotationPrefix}enable`] = 'true';
  const parsed = parseAdmissionReview(review);
  if (!parsed.ok) throw new Error(parsed.error);
  const outcome = reviewResponse(parsed.value, [sidecarExtension({ profiles: [agentProfile], injectorVersion: 'e2e' })]);
  const patch = outcome.reply.response.patch;
  if (patch === undefined) throw new Error(`not injected: ${outcome.decision} ${outcome.reply.response.status?.message ?? ''}`);
  return applyPatchCopy(raw, decodePatch(patch));
}

beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'injector-verify-'));
  writeFileSync(join(dir, 'profiles.yaml'), PROFILES_TEXT);
  injector = await startInjector(undefined, { PROFILES_FILE: join(dir, 'profiles.yaml') });
  const configuration = buildMutatingWebhookConfiguration({
    name: webhookName,
    installNamespace: 'outrigger-system',
    client: { mode: 'url', port: Number(new URL(injector.baseUrl).port) },
    caBundle: encodeCaBundle(injector.ca),
    failurePolicy: 'Fail',
  });
  const probe = await createTestNamespace(kc, 'verify-probe', enabled);
  webhookProbe = { namespace: probe, pod: pod('probe', xxlJob) as V1Pod, agent: 'xxl-agent' };
  await registerWebhook(admissionApi, core, configuration, webhookProbe);
});

afterAll(async () => {
  await unregisterWebhook(admissionApi, core, webhookName, webhookProbe);
  await injector?.process.stop();
});

describe('verifyInjectedAgent against a real kube-apiserver', () => {
  it('accepts every agent the webhook injects, as the API server stores it (regular, native sidecar, ports, quantities, digest, hostNetwork)', async () => {
    const namespace = await createTestNamespace(kc, 'verify-ok', enabled);
    const all = { ...xxlJob, 'native-probe.example.com/enable': 'true', 'digest-agent.example.com/enable': 'true', 'native-probe.example.com/level': 'debug' };
    const stored = createPod(namespace, pod('all', all));
    expect(stored.spec.initContainers.map((c: Pod) => c.name)).toEqual(['native-probe']);
    expect(stored.spec.containers.map((c: Pod) => c.name)).toEqual(['app', 'xxl-agent', 'digest-agent']);
    // The reference profile takes the pod's token away: the other agents share the xxl agent's.
    for (const name of ['xxl-job', 'native-probe', 'digest-agent']) expect(verifyInjectedAgent(stored, profile(name), [...profiles.values()]), name).toEqual({ ok: true });
    // What the API server rewrote, so this test fails if it stops doing so.
    expect(stored.spec.initContainers[0]).toMatchObject({ imagePullPolicy: 'Always', resources: { limits: { cpu: '500m', memory: '1Gi', 'ephemeral-storage': '1k' }, requests: { cpu: '500m' } } });
    expect(stored.spec.containers[2]).toMatchObject({ imagePullPolicy: 'IfNotPresent', resources: { requests: { memory: '1536Mi' }, limits: { memory: '2Gi' } } });

    const defaults = createPod(namespace, pod('defaults', { 'native-probe.example.com/enable': 'true' }));
    expect(verifyInjectedAgent(defaults, profile('native-probe'))).toEqual({ ok: true });
    const onHost = createPod(namespace, pod('on-host', { 'native-probe.example.com/enable': 'true' }, { hostNetwork: true }));
    expect(onHost.spec.initContainers[0].ports[0]).toMatchObject({ hostPort: 8125 });
    expect(verifyInjectedAgent(onHost, profile('native-probe'))).toEqual({ ok: true });
  });

  it('accepts an agent with a complete container spec as the API server stores it (env sources, envFrom, volumes, probes, hooks, pull secret)', async () => {
    const namespace = await createTestNamespace(kc, 'verify-spec', enabled);
    const stored = createPod(namespace, pod('spec', { 'config-agent.example.com/enable': 'true' }));
    expect(verifyInjectedAgent(stored, profile('config-agent'), [...profiles.values()])).toEqual({ ok: true });
    // What the API server filled in, so this test fails if it stops doing so.
    const agent = stored.spec.containers.find((c: Pod) => c.name === 'config-agent');
    expect(agent.readinessProbe).toEqual({ httpGet: { path: '/ready', port: 'health', scheme: 'HTTP' }, timeoutSeconds: 1, periodSeconds: 10, successThreshold: 1, failureThreshold: 3 });
    expect(agent.livenessProbe).toMatchObject({ tcpSocket: { port: 8081 }, timeoutSeconds: 1 });
    expect(agent.env[1].valueFrom.resourceFieldRef).toEqual({ resource: 'limits.memory', divisor: '1Mi' });
    expect(stored.spec.volumes.find((v: Pod) => v.name === 'config-agent-config')).toEqual({ name: 'config-agent-config', configMap: { name: 'config-agent-config', defaultMode: 420 } });
    expect(stored.spec.imagePullSecrets).toEqual([{ name: 'config-agent-registry' }]);

    // Defaults of fields the fixture leaves out: a grpc probe, an httpGet hook, a downward item, a divisor, a hostPath.
    const more = profileWith('config-agent', (spec) => {
      spec.container.env.push({ name: 'CPU', valueFrom: { resourceFieldRef: { resource: 'requests.cpu' } } });
      spec.container.livenessProbe = { grpc: { port: 8081 } };
      spec.container.lifecycle = { postStart: { httpGet: { port: 8081 } } };
      spec.volumes.push({ name: 'config-agent-info', projected: { sources: [{ downwardAPI: { items: [{ path: 'name', fieldRef: { fieldPath: 'metadata.name' } }] } }] } });
    });
    const raw = structuredClone(pod('raw', {}));
    const rendered = injectInto(raw, more);
    const storedMore = createPod(await createTestNamespace(kc, 'verify-spec-raw'), rendered);
    expect(verifyInjectedAgent(storedMore, more)).toEqual({ ok: true });
    const moreAgent = storedMore.spec.containers.find((c: Pod) => c.name === 'config-agent');
    expect(moreAgent.livenessProbe.grpc).toEqual({ port: 8081, service: '' });
    expect(moreAgent.lifecycle.postStart.httpGet).toEqual({ port: 8081, path: '/', scheme: 'HTTP' });
    expect(moreAgent.env.at(-1).valueFrom.resourceFieldRef).toEqual({ resource: 'requests.cpu', divisor: '0' });
  });

  it('stores a pod\'s resource overrides within bounds as the API server defaults them, verifies them, and refuses one beyond, naming the annotation and the bound', async () => {
    const namespace = await createTestNamespace(kc, 'verify-overrides', enabled);
    const stored = createPod(namespace, pod('overridden', { 'config-agent.example.com/enable': 'true', 'config-agent.example.com/limits.cpu': '0.5', 'config-agent.example.com/limits.memory': '0.25Gi' }));
    const agent = stored.spec.containers.find((c: Pod) => c.name === 'config-agent');
    // Canonical, and the requests the API server derives from the limits.
    expect(agent.resources).toEqual({ limits: { cpu: '500m', memory: '256Mi' }, requests: { cpu: '500m', memory: '256Mi' } });
    expect(verifyInjectedAgent(stored, profile('config-agent'), [...profiles.values()])).toEqual({ ok: true });
    expect(createError(namespace, pod('beyond', { 'config-agent.example.com/enable': 'true', 'config-agent.example.com/limits.memory': '1Gi' }))).toContain(
      'annotation config-agent.example.com/limits.memory: "1Gi" is outside the bounds of profile config-agent: limits.memory from 32Mi to 512Mi',
    );
  });

  it('refuses each single-field forgery of an injected pod, created where no webhook runs', async () => {
    const labelled = await createTestNamespace(kc, 'verify-source', enabled);
    const source = createPod(labelled, pod('source', xxlJob));
    const namespace = await createTestNamespace(kc, 'verify-forged');
    /** The injected pod's spec and annotations under a new name, with one change. */
    const copy = (name: string, change: (agent: Pod, copied: Pod) => void = () => undefined): Pod => {
      const { nodeName: _node, priority: _priority, ...spec } = structuredClone(source.spec);
      const copied = { apiVersion: 'v1', kind: 'Pod', metadata: { name, labels: source.metadata.labels, annotations: { ...source.metadata.annotations } }, spec };
      change(copied.spec.containers.find((c: Pod) => c.name === 'xxl-agent'), copied);
      return copied;
    };
    // The unchanged copy verifies: each refusal below is its one change.
    expect(verifyInjectedAgent(createPod(namespace, copy('exact')), profile('xxl-job'))).toEqual({ ok: true });

    const forgeries: Record<string, [(agent: Pod, copied: Pod) => void, RegExp]> = {
      tag: [(a) => (a.image = 'ghcr.io/outrigger/xxl-agent:6.6.6'), /: image is not/],
      command: [(a) => (a.command = ['sh', '-c', 'sleep 1d']), /: command is not/],
      args: [(a) => (a.args = ['--debug']), /: args is not/],
      'working-dir': [(a) => (a.workingDir = '/tmp'), /: workingDir is not/],
      'privilege-escalation': [(a) => (a.securityContext.allowPrivilegeEscalation = true), /: securityContext\.allowPrivilegeEscalation is not/],
      'run-as-user': [(a) => (a.securityContext.runAsUser = 1000), /: securityContext\.runAsUser is not/],
      capabilities: [(a) => (a.securityContext.capabilities.add = ['NET_ADMIN']), /: securityContext\.capabilities\.add is not/],
      'env-value': [(a) => (a.env[0].value = 'http://mallory.example/'), /: env\[0\]\.value is not/],
      'env-added': [(a) => a.env.push({ name: 'LD_PRELOAD', value: '/tmp/x.so' }), /: env\[\d+\] is not/],
      'env-from': [(a) => (a.envFrom = [{ configMapRef: { name: 'settings' } }]), /: envFrom is not/],
      mount: [
        (a, c) => {
          c.spec.volumes = [...(c.spec.volumes ?? []), { name: 'scratch', emptyDir: {} }];
          a.volumeMounts = [...(a.volumeMounts ?? []), { name: 'scratch', mountPath: '/scratch' }];
        },
        /: volumeMounts\[\d\] is not/,
      ],
      lifecycle: [(a) => (a.lifecycle = { postStart: { exec: { command: ['sh'] } } }), /: lifecycle is not/],
      probe: [(a) => (a.startupProbe = { exec: { command: ['true'] } }), /: startupProbe is not/],
      stdin: [(a) => (a.stdin = true), /: stdin is not/],
      limits: [(a) => (a.resources.limits.cpu = '2'), /: resources\.limits\.cpu is not/],
      'host-port': [(a) => (a.ports[0].hostPort = 9999), /: ports\[0\]\.hostPort is not/],
      'pull-policy': [(a) => (a.imagePullPolicy = 'Always'), /: imagePullPolicy is not/],
      'init-list': [
        (a, c) => {
          c.spec.containers = c.spec.containers.filter((x: Pod) => x !== a);
          c.spec.initContainers = [{ ...a, restartPolicy: 'Always' }];
        },
        /^container xxl-agent is in initContainers/,
      ],
      'no-status': [(_, c) => delete c.metadata.annotations['xxl-agent/status'], /^annotation xxl-agent\/status is missing$/],
      'host-network': [(_, c) => (c.spec.hostNetwork = true), /^the pod sets spec\.hostNetwork: true/],
    };
    const verdicts = Object.entries(forgeries).map(([name, [change]]) => [name, verifyInjectedAgent(createPod(namespace, copy(name, change)), profile('xxl-job'))] as const);
    for (const [name, verdict] of verdicts) {
      expect(verdict.ok, name).toBe(false);
      expect(verdict.ok ? '' : verdict.problem, name).toMatch(forgeries[name]?.[1] ?? /never/);
    }
  });

  it('agrees with the API server on the canonical form of every quantity', async () => {
    const namespace = await createTestNamespace(kc, 'verify-quantities');
    const given = ['0.0001', '5n', '1.0001', '0.5', '0.1', '1.1', '1000m', '1500m', '1000', '1500', '12000', '1000k', '128974848', '1e3', '10e2', '1e2', '1024Mi', '1.5Gi', '2048Ki', '512Ki', '0.5Ki', '0', '.5', '0.0000000001', '1025Ki'];
    const keys = ['requests.cpu', 'limits.cpu', 'requests.memory', 'limits.memory', 'requests.storage', 'requests.ephemeral-storage', 'limits.ephemeral-storage', 'cpu', 'memory', 'ephemeral-storage'];
    const stored: [string, string][] = [];
    for (let start = 0, n = 0; start < given.length; start += keys.length, n++) {
      const hard = Object.fromEntries(keys.flatMap((key, i) => (given[start + i] === undefined ? [] : [[key, given[start + i]]])));
      kubectl(['create', '-n', namespace, '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: `q${n}` }, spec: { hard } }));
      const quota = JSON.parse(kubectl(['get', 'resourcequota', '-n', namespace, `q${n}`, '-o', 'json']));
      for (const [key, value] of Object.entries(hard)) stored.push([value as string, quota.spec.hard[key]]);
    }
    expect(stored).toHaveLength(given.length);
    expect(stored.filter(([value, asStored]) => canonicalQuantity(value) !== asStored)).toEqual([]);
  });

  it('the webhook refuses a pod that did not opt in but carries a forged agent, and an opted-in pod on the node network', async () => {
    const namespace = await createTestNamespace(kc, 'verify-refused', enabled);
    const forged = pod('forged', { 'xxl-agent/status': '{"profile":"xxl-job","hash":"0","version":"0"}' });
    forged.spec.containers.push({ name: 'xxl-agent', image: 'ghcr.io/outrigger/xxl-agent:9.9.9', command: ['sh', '-c', 'sleep 1d'] });
    expect(createError(namespace, forged)).toMatch(/profile xxl-job: the pod carries annotation xxl-agent\/status and a xxl-agent container that is not the injector's \(.*\); remove both and opt in with xxl-agent\/enable: "true"/);
    expect(createError(namespace, pod('on-host', xxlJob, { hostNetwork: true }))).toMatch(
      /the pod sets spec\.hostNetwork: true and the agent's port would be open on the node's network; profile xxl-job does not set spec\.dangerouslyAllowHostNamespaces: true/,
    );
  });
});
