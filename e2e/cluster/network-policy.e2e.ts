import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { adminStandInAddress, adminStandInObjects, repoRoot } from '@outrigger/control-plane';
import { ACCESS_TOKEN, createNamespace, eventually, kubectl, OUTRIGGER_NAMESPACE } from './support.ts';

// deploy/components/network-policy as deploy/overlays/local installs it, enforced on the node by the
// cluster's NetworkPolicy engine (kube-network-policies): each route is tried from a tenant's pod.
const METRICS_LABEL = 'outrigger.dev/metrics';
const CONTROLLERS = ['outrigger-rbac-syncer', 'outrigger-cert-manager'];
/** A connection the policy drops: the SYN is never answered, so busybox nc gives up at its -w. */
const REFUSED = /timed out/i;

describe('the install namespace takes ingress only where its network policies say', () => {
  let ns: string;
  const inPod = (script: string) => kubectl(['exec', '-n', ns, 'caller', '--', 'sh', '-c', script]);
  const podIps = (app: string) => kubectl(['get', 'pods', '-n', OUTRIGGER_NAMESPACE, '-l', `app.kubernetes.io/name=${app}`, '-o', 'jsonpath={.items[*].status.podIP}']).split(' ').filter(Boolean);
  // nc, not busybox wget: its wget crashes (SIGSEGV) on the metrics answer.
  const metrics = (ip: string) => inPod(`printf 'GET /metrics HTTP/1.0\\r\\n\\r\\n' | nc -w 3 ${ip} 8080`);

  beforeAll(() => {
    ns = createNamespace('netpol', false);
    startCaller(ns);
  });

  afterAll(() => {
    kubectl(['delete', 'namespace', ns, '--wait=false']);
  });

  it("the injector's webhook port answers a pod of any namespace", () => {
    const ips = podIps('outrigger-injector');
    expect(ips.length).toBeGreaterThan(0);
    for (const ip of ips) expect(connects(ns, ip, 8443)).toContain('connected');
  });

  it("the controllers' metrics do not answer a namespace not labelled for monitoring", () => {
    for (const app of CONTROLLERS) {
      const ips = podIps(app);
      expect(ips.length).toBeGreaterThan(0);
      for (const ip of ips) expect(() => metrics(ip), `${app} at ${ip}`).toThrow(REFUSED);
    }
  });

  it('the same pod reads them once its namespace is labelled for monitoring, and not after the label goes (the control)', async () => {
    kubectl(['label', 'namespace', ns, `${METRICS_LABEL}=allowed`]);
    for (const app of CONTROLLERS) {
      for (const ip of podIps(app)) expect(await eventually(() => metrics(ip), `${app}'s metrics at ${ip}`, 20_000)).toMatch(/^# (HELP|TYPE) /m);
    }
    kubectl(['label', 'namespace', ns, `${METRICS_LABEL}-`]);
    const ip = podIps(CONTROLLERS[0] ?? '')[0] ?? '';
    // The engine reads labels from its watch: a change holds within moments, not at once.
    await eventually(() => expect(() => metrics(ip)).toThrow(REFUSED), 'the metrics refused again', 20_000);
  });
});

// docs/examples/xxl-agent-network-policy.yaml, as the README tells a team to apply it: another
// tenant's pod no longer reaches the agent's port, while the business container's ports and the
// admin's namespace still do.
describe("the agent-port policy for a team's namespace", () => {
  const example = readYaml<NetworkPolicy>('docs', 'examples', 'xxl-agent-network-policy.yaml');
  const profile = readYaml<{ spec: { container: { ports: { containerPort: number }[] } } }>('deploy', 'base', 'profiles', 'xxl-job.yaml');
  const agentPort = profile.spec.container.ports[0]?.containerPort ?? 0;
  const BUSINESS_PORT = 8080;
  let team: string;
  let admin: string;
  let rogue: string;
  let worker: string;

  beforeAll(() => {
    team = createNamespace('netpol-team');
    admin = createNamespace('netpol-admin', false);
    rogue = createNamespace('netpol-rogue', false);
    const annotations = { 'xxl-agent/enable': 'true', 'xxl-agent/job-addr': 'http://admin:8080', 'xxl-agent/target-container': 'app', 'xxl-agent/job-name': 'netpol' };
    const app = { name: 'app', image: 'localhost/busybox:local', imagePullPolicy: 'Never', command: ['httpd', '-f', '-p', String(BUSINESS_PORT)] };
    kubectl(['create', '-n', team, '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'worker', annotations }, spec: { terminationGracePeriodSeconds: 1, containers: [app] } }));
    startCaller(admin);
    startCaller(rogue);
    // Running is enough: the agent listens before it is ready (ready needs the admin this test has none of).
    kubectl(['wait', '--for=jsonpath={.status.podIP}', 'pod/worker', '-n', team, '--timeout=120s']);
    worker = kubectl(['get', 'pod', 'worker', '-n', team, '-o', 'jsonpath={.status.podIP}']);
  });

  afterAll(() => {
    for (const ns of [team, admin, rogue]) kubectl(['delete', 'namespace', ns, '--wait=false']);
  });

  it("confines the reference profile's agent port", () => {
    const confined = example.spec.ingress.flatMap((rule) => (rule.from ? rule.ports : []));
    expect(confined).toEqual([{ protocol: 'TCP', port: agentPort }]);
  });

  it("before it, another tenant's pod reaches the agent's port (the control)", async () => {
    expect(await eventually(() => connects(rogue, worker, agentPort), 'the agent listening', 60_000)).toContain('connected');
  });

  it("once applied, that pod reaches the business container's port but not the agent's; the admin's namespace reaches both", async () => {
    const policy = structuredClone(example);
    const adminRule = policy.spec.ingress[0]?.from?.[0]?.namespaceSelector?.matchLabels;
    expect(adminRule).toEqual({ 'kubernetes.io/metadata.name': 'xxl-job-admin' });
    if (adminRule) adminRule['kubernetes.io/metadata.name'] = admin;
    kubectl(['apply', '-n', team, '-f', '-'], JSON.stringify(policy));
    await eventually(() => expect(() => connects(rogue, worker, agentPort)).toThrow(REFUSED), "the agent's port refused", 20_000);
    expect(connects(rogue, worker, BUSINESS_PORT)).toContain('connected');
    expect(connects(admin, worker, agentPort)).toContain('connected');
    expect(connects(admin, worker, BUSINESS_PORT)).toContain('connected');
  });
});

// docs/examples/xxl-job-admin-network-policy.yaml, as the README tells an admin to apply it: with one
// token for every executor, another tenant could register under a team's app name; the policy keeps
// that tenant's pods from reaching the admin, while the boundary's own pods still register.
describe('the xxl-job-admin policy for one trust boundary', () => {
  const example = readYaml<NetworkPolicy>('docs', 'examples', 'xxl-job-admin-network-policy.yaml');
  let team: string;
  let rogue: string;
  /** A registration under the team's app name, with the token every labelled namespace holds, from the pod `caller` of `ns`. */
  const register = (ns: string) => {
    const admin = new URL(adminStandInAddress(team));
    const body = JSON.stringify({ registryGroup: 'EXECUTOR', registryKey: 'team-app', registryValue: `http://${ns}.invalid:9999/` });
    const request = [`POST ${admin.pathname}/api/registry HTTP/1.0`, `XXL-JOB-ACCESS-TOKEN: ${ACCESS_TOKEN}`, 'Content-Type: application/json', `Content-Length: ${body.length}`, '', body].join('\r\n');
    return kubectl(['exec', '-n', ns, 'caller', '--', 'sh', '-c', 'printf "%s" "$1" | nc -w 3 "$2" "$3"', 'sh', request, admin.hostname, admin.port]);
  };

  beforeAll(() => {
    team = createNamespace('netpol-boundary');
    rogue = createNamespace('netpol-hijack');
    kubectl(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: adminStandInObjects(team) }));
    for (const ns of [team, rogue]) startCaller(ns);
    kubectl(['rollout', 'status', '-n', team, 'deployment/xxl-job-admin', '--timeout=180s']);
  });

  afterAll(() => {
    for (const ns of [team, rogue]) kubectl(['delete', 'namespace', ns, '--wait=false']);
  });

  it("before it, another tenant's pod registers under the team's app name (the control)", async () => {
    expect(await eventually(() => register(rogue), 'the admin answering', 60_000)).toContain('"code":200');
  });

  it("once applied, that pod no longer reaches the admin, and the boundary's own pods still register", async () => {
    const boundary = `boundary-${team}`;
    const policy = structuredClone(example);
    const selector = policy.spec.ingress[0]?.from?.[0]?.namespaceSelector?.matchLabels;
    expect(selector).toEqual({ 'xxl-job-admin': 'team-a' });
    if (selector) selector['xxl-job-admin'] = boundary;
    kubectl(['label', 'namespace', team, `xxl-job-admin=${boundary}`]);
    kubectl(['apply', '-n', team, '-f', '-'], JSON.stringify(policy));
    await eventually(() => expect(() => register(rogue)).toThrow(REFUSED), 'the admin refused to the other tenant', 20_000);
    expect(register(team)).toContain('"code":200');
  });
});

/** A TCP connection from the pod `caller` of `ns`: 'connected', or a throw naming how it failed. */
function connects(ns: string, ip: string, port: number): string {
  return kubectl(['exec', '-n', ns, 'caller', '--', 'sh', '-c', `nc -w 3 ${ip} ${port} </dev/null && echo connected`]);
}

function readYaml<T>(...path: string[]): T {
  return parse(readFileSync(join(repoRoot(), ...path), 'utf8')) as T;
}

/** A busybox pod `caller` in `ns`, ready. */
function startCaller(ns: string): void {
  kubectl(['run', 'caller', '-n', ns, '--image=localhost/busybox:local', '--image-pull-policy=Never', '--restart=Never', '--command', '--', 'sleep', '3600']);
  kubectl(['wait', '--for=condition=Ready', 'pod/caller', '-n', ns, '--timeout=120s']);
}

interface NetworkPolicy {
  readonly spec: {
    readonly ingress: readonly {
      readonly from?: readonly { readonly namespaceSelector?: { readonly matchLabels?: Record<string, string> } }[];
      readonly ports: readonly { readonly protocol: string; readonly port: number; readonly endPort?: number }[];
    }[];
  };
}
