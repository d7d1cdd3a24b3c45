import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { createNamespace, eventually, injectorsHold, kubectl, kubectlJson, type PodJson, pods } from './support.ts';

// Agents that need more than an image: a complete container spec (a ConfigMap volume, env from a
// Secret and from its own resources, an emptyDir, probes, a hook, a pull secret), and the start
// order: an application that needs its agent starts only once the agent is ready.
const BUSYBOX = 'localhost/busybox:local';
const RESTRICTED = { runAsNonRoot: true, runAsUser: 65532, allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] }, seccompProfile: { type: 'RuntimeDefault' } };
/** The agent logs what it was given, then serves on 8090 (after `delay` seconds). */
const serve = (delay: number) => ['sh', '-c', `echo "level=$(cat /etc/agent/level) token=$TOKEN memory=$MEMORY_MI"; sleep ${delay}; mkdir -p /tmp/www && echo agent-ready > /tmp/www/index.html && exec httpd -f -p 8090 -h /tmp/www`];

interface Profile {
  readonly spec: { readonly container: Record<string, unknown>; readonly [field: string]: unknown };
  readonly [field: string]: unknown;
}

function profile(name: string, extra: Record<string, unknown>, delay = 0): Profile {
  return {
    apiVersion: 'outrigger.dev/v1alpha1',
    kind: 'AgentProfile',
    metadata: { name },
    spec: {
      annotationPrefix: `${name}.outrigger.test/`,
      container: {
        name,
        image: BUSYBOX,
        imagePullPolicy: 'Never',
        command: serve(delay),
        ports: [{ name: 'http', containerPort: 8090 }],
        env: [
          { name: 'TOKEN', valueFrom: { secretKeyRef: { name: 'agent-credentials', key: 'token' } } },
          { name: 'MEMORY_MI', valueFrom: { resourceFieldRef: { resource: 'limits.memory', divisor: '1Mi' } } },
        ],
        volumeMounts: [
          { name: `${name}-config`, mountPath: '/etc/agent', readOnly: true },
          { name: `${name}-scratch`, mountPath: '/tmp' },
        ],
        readinessProbe: { httpGet: { path: '/', port: 'http' }, periodSeconds: 1 },
        livenessProbe: { tcpSocket: { port: 8090 }, initialDelaySeconds: 30 },
        lifecycle: { preStop: { sleep: { seconds: 1 } } },
        resources: { requests: { cpu: '10m', memory: '16Mi' }, limits: { cpu: '100m', memory: '32Mi' } },
        securityContext: RESTRICTED,
      },
      volumes: [
        { name: `${name}-config`, configMap: { name: 'agent-config' } },
        { name: `${name}-scratch`, emptyDir: { sizeLimit: '1Mi' } },
      ],
      imagePullSecrets: [{ name: 'agent-registry' }],
      ...extra,
    },
  };
}

const SPEC = 'spec-agent';
const HOLD = 'hold-agent';
const NO_HOLD = 'nohold-agent';
// An application that starts before its agent serves cannot reach it. The held agent serves after
// 3 s; the unheld one (the control) after 60 s, so that it fails however slowly the node starts the app.
const held = profile(HOLD, { holdApplicationUntilReady: true }, 3);
held.spec.container['startupProbe'] = { httpGet: { path: '/', port: 'http' }, periodSeconds: 1, failureThreshold: 60 };
const PROFILES = [profile(SPEC, {}), held, profile(NO_HOLD, {}, 60)];

/** Namespace objects the agents read: the ConfigMap and Secret they name, and a pull secret. */
function agentInputs(ns: string): void {
  kubectl(['create', 'configmap', 'agent-config', '-n', ns, '--from-literal=level=debug']);
  kubectl(['create', 'secret', 'generic', 'agent-credentials', '-n', ns, '--from-literal=token=s3cret']);
  kubectl(['create', 'secret', 'docker-registry', 'agent-registry', '-n', ns, '--docker-server=registry.invalid', '--docker-username=u', '--docker-password=p']);
}

/** A Job whose one container needs the agent at once: it fetches the agent's page and fails if it cannot (busybox wget's -T crashes it). */
const job = (name: string, agent: string) =>
  stringify({
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name },
    spec: {
      backoffLimit: 0,
      template: {
        metadata: { labels: { job: name }, annotations: { [`${agent}.outrigger.test/enable`]: 'true' } },
        spec: { restartPolicy: 'Never', terminationGracePeriodSeconds: 1, containers: [{ name: 'app', image: BUSYBOX, imagePullPolicy: 'Never', command: ['wget', '-q', '-O', '-', 'http://127.0.0.1:8090/'] }] },
      },
    },
  });

const opted = (name: string, agent: string) =>
  stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name, annotations: { [`${agent}.outrigger.test/enable`]: 'true' } }, spec: { terminationGracePeriodSeconds: 1, containers: [{ name: 'app', image: BUSYBOX, imagePullPolicy: 'Never', command: ['sleep', '3600'] }] } });

beforeAll(async () => {
  kubectl(['apply', '-f', '-'], PROFILES.map((p) => stringify(p)).join('---\n'));
  // The injector takes new profiles from its watch: wait until a dry run gets each agent.
  const ns = createNamespace('agent-spec-probe');
  for (const name of [SPEC, HOLD, NO_HOLD]) {
    await eventually(() => {
      const admitted = JSON.parse(kubectl(['create', '-n', ns, '--dry-run=server', '-o', 'json', '-f', '-'], opted('probe', name))) as PodJson;
      const all = [...admitted.spec.containers, ...(admitted.spec.initContainers ?? [])];
      if (!all.some((c) => c.name === name)) throw new Error(`no ${name} yet`);
    }, `profile ${name} in force`, 60_000);
    await injectorsHold(name);
  }
});

afterAll(() => {
  kubectl(['delete', '--ignore-not-found', 'agentprofile', SPEC, HOLD, NO_HOLD]);
});

describe('an agent with a complete container spec on the real node', () => {
  it('runs with its ConfigMap volume, its Secret env, its own resources, an emptyDir and its probes, and the pod carries its pull secret', async () => {
    const ns = createNamespace('agent-spec');
    agentInputs(ns);
    kubectl(['create', '-n', ns, '-f', '-'], opted('web', SPEC));
    kubectl(['wait', '--for=condition=Ready', 'pod/web', '-n', ns, '--timeout=120s']);
    const pod = kubectlJson<PodJson & { spec: { imagePullSecrets?: { name: string }[]; volumes?: { name: string }[] } }>(['get', 'pod', 'web', '-n', ns]);
    // Ready means the readiness probe (httpGet on the named port) passed in the agent too.
    expect(pod.status.containerStatuses?.map((c) => `${c.name}:${String(c.ready)}`).sort()).toEqual(['app:true', `${SPEC}:true`]);
    expect(pod.spec.imagePullSecrets).toEqual([{ name: 'agent-registry' }]);
    expect(pod.spec.volumes?.map((v) => v.name)).toEqual(expect.arrayContaining([`${SPEC}-config`, `${SPEC}-scratch`]));
    expect(kubectl(['logs', '-n', ns, 'web', '-c', SPEC])).toContain('level=debug token=s3cret memory=32');
  });
});

describe('Jobs and start order on the real node', () => {
  it('holdApplicationUntilReady: the application starts only once the agent\'s startup probe passed, so it reaches the agent and the Job completes', async () => {
    const ns = createNamespace('agent-hold');
    agentInputs(ns);
    kubectl(['create', '-n', ns, '-f', '-'], job('held', HOLD));
    kubectl(['wait', '--for=condition=complete', 'job/held', '-n', ns, '--timeout=180s']);
    const [pod] = pods(ns, 'job=held');
    expect(pod?.spec.initContainers?.find((c) => c.name === HOLD)?.restartPolicy).toBe('Always');
    expect(kubectl(['logs', '-n', ns, pod?.metadata.name ?? '', '-c', 'app'])).toContain('agent-ready');
  });

  it('the same Job with an agent that does not hold the application fails: it starts before the agent serves (the control)', async () => {
    const ns = createNamespace('agent-nohold');
    agentInputs(ns);
    kubectl(['create', '-n', ns, '-f', '-'], job('unheld', NO_HOLD));
    kubectl(['wait', '--for=condition=failed', 'job/unheld', '-n', ns, '--timeout=180s']);
    // The Job's pod runs to completion: even this profile's agent is a native sidecar there.
    const [pod] = pods(ns, 'job=unheld');
    expect(pod?.spec.initContainers?.find((c) => c.name === NO_HOLD)?.restartPolicy).toBe('Always');
    // It failed for the reason under test: nothing listened yet.
    expect(kubectl(['logs', '-n', ns, pod?.metadata.name ?? '', '-c', 'app'])).toContain('Connection refused');
  });

  it('a Job with the reference profile (a regular-container agent elsewhere) gets it as a native sidecar and completes', async () => {
    const ns = createNamespace('agent-job');
    const annotations = { 'xxl-agent/enable': 'true', 'xxl-agent/job-addr': 'http://xxl-job-admin.jobs:8080/xxl-job-admin', 'xxl-agent/target-container': 'work', 'xxl-agent/job-name': 'once' };
    const manifest = {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name: 'once' },
      spec: { backoffLimit: 0, template: { metadata: { labels: { job: 'once' }, annotations }, spec: { restartPolicy: 'Never', terminationGracePeriodSeconds: 1, containers: [{ name: 'work', image: BUSYBOX, imagePullPolicy: 'Never', command: ['sh', '-c', 'echo done'] }] } } },
    };
    kubectl(['create', '-n', ns, '-f', '-'], stringify(manifest));
    kubectl(['wait', '--for=condition=complete', 'job/once', '-n', ns, '--timeout=180s']);
    const [pod] = pods(ns, 'job=once');
    expect(pod?.spec.containers.map((c) => c.name)).toEqual(['work']);
    expect(pod?.spec.initContainers?.find((c) => c.name === 'xxl-agent')?.restartPolicy).toBe('Always');
  });
});
