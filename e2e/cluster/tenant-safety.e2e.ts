import { describe, expect, it } from 'vitest';
import { applyFixture, boundServiceAccounts, createNamespace, eventually, kubectl, pods, runJob } from './support.ts';

// The attacks of a hostile tenant (and the mistakes of an admin) that once got through, on the
// real node with Outrigger installed from deploy/overlays/local.
const OPT_IN = { 'xxl-agent/enable': 'true', 'xxl-agent/job-addr': 'http://admin:8080', 'xxl-agent/target-container': 'app', 'xxl-agent/job-name': 'safety' };
const TOKEN = '/var/run/secrets/kubernetes.io/serviceaccount/token';
/** An application container that passes the restricted Pod Security Standard itself. */
const RESTRICTED_APP = {
  name: 'app',
  image: 'localhost/busybox:local',
  imagePullPolicy: 'Never',
  command: ['sh', '-c', 'exec sleep 3600'],
  securityContext: { runAsNonRoot: true, runAsUser: 1000, allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] }, seccompProfile: { type: 'RuntimeDefault' } },
};

const podJson = (name: string, annotations: Record<string, string>, spec: Record<string, unknown>) =>
  JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name, annotations }, spec: { terminationGracePeriodSeconds: 1, containers: [RESTRICTED_APP], ...spec } });

/** The API server's answer to creating `pod` (server-side dry run): 'created' or its refusal. */
function create(namespace: string, pod: string, dryRun = true): string {
  try {
    kubectl(['create', '-n', namespace, ...(dryRun ? ['--dry-run=server'] : []), '-f', '-'], pod);
    return 'created';
  } catch (error) {
    return (error as Error).message;
  }
}

/** Runs `cmd` in a container; its output, or the error it ended with. */
function execIn(namespace: string, pod: string, container: string, cmd: readonly string[]): string {
  try {
    return kubectl(['exec', '-n', namespace, pod, '-c', container, '--', ...cmd]);
  } catch (error) {
    return (error as Error).message;
  }
}

async function running(namespace: string, name: string): Promise<void> {
  kubectl(['wait', '-n', namespace, `pod/${name}`, '--for=condition=Ready', '--timeout=180s']);
  await eventually(() => {
    if (!boundServiceAccounts().includes(`${namespace}/default`)) throw new Error('not bound yet');
  }, `${namespace}/default bound`);
}

describe('tenant safety on the real node', () => {
  it('the application container holds no Kubernetes token; the agent alone does, and its exec works', async () => {
    const ns = createNamespace('token');
    applyFixture('deployment.yaml', ns);
    kubectl(['rollout', 'status', 'deployment/billing', '-n', ns, '--timeout=180s']);
    const [pod] = pods(ns, 'app=billing');
    const name = pod?.metadata.name ?? '';
    expect(JSON.parse(kubectl(['get', 'pod', '-n', ns, name, '-o', 'jsonpath={.spec}'])).automountServiceAccountToken).toBe(false);
    expect(execIn(ns, name, 'app', ['cat', TOKEN])).toMatch(/No such file or directory/);
    expect(execIn(ns, name, 'app', ['ls', '/var/run/secrets'])).not.toMatch(/kubernetes\.io/);
    await eventually(async () => {
      const log = await runJob(ns, name, 'echo exec-ok');
      if (!log.includes('exec-ok')) throw new Error(`agent exec not ok: ${log}`);
    }, "the agent's exec into the app container");
  });

  it('a pod that turns its own token off keeps a working agent', async () => {
    const ns = createNamespace('no-token');
    expect(create(ns, podJson('quiet', OPT_IN, { automountServiceAccountToken: false }), false)).toBe('created');
    await running(ns, 'quiet');
    await eventually(async () => {
      const log = await runJob(ns, 'quiet', 'echo exec-ok');
      if (!log.includes('exec-ok')) throw new Error(`agent exec not ok: ${log}`);
    }, "the agent's exec");
  });

  it('a namespace that enforces the restricted Pod Security Standard runs opted-in pods', async () => {
    const ns = createNamespace('restricted');
    kubectl(['label', 'namespace', ns, 'pod-security.kubernetes.io/enforce=restricted']);
    expect(create(ns, podJson('strict', OPT_IN, {}), false)).toBe('created');
    await running(ns, 'strict');
  });

  it('an opted-in pod on the host network (or PID or IPC namespace) is refused, saying which field and which profile setting', () => {
    const ns = createNamespace('host');
    for (const field of ['hostNetwork', 'hostPID', 'hostIPC']) {
      const refusal = create(ns, podJson(`host-${field.toLowerCase()}`, OPT_IN, { [field]: true }));
      expect(refusal, field).toContain(field);
      expect(refusal).toContain('dangerouslyAllowHostNamespaces');
    }
  });

  it('a pod created without opting in but carrying the status annotation and an agent-named container is refused at creation', () => {
    const ns = createNamespace('forger');
    const agent = JSON.parse(kubectl(['get', 'agentprofile', 'xxl-job', '-o', 'jsonpath={.spec.container}'])) as { image: string };
    const forged = podJson('forged', { 'xxl-agent/status': '{"profile":"xxl-job","hash":"0000000000000000","version":"x"}' }, {
      containers: [RESTRICTED_APP, { name: 'xxl-agent', image: agent.image, command: ['sh', '-c', 'exec sleep 3600'] }],
    });
    const refusal = create(ns, forged, false);
    expect(refusal).toContain('admission webhook "inject.outrigger.dev" denied the request: profile xxl-job: the pod carries annotation xxl-agent/status');
    expect(() => kubectl(['get', 'pod', '-n', ns, 'forged'])).toThrow(/not found/);
  });

  it('an AgentProfile whose agent falls short of the restricted standard is refused, naming the field and the opt-out', () => {
    const reference = JSON.parse(kubectl(['get', 'agentprofile', 'xxl-job', '-o', 'json'])) as { spec: { container: Record<string, unknown> } };
    const { securityContext: _dropped, ...container } = reference.spec.container;
    const weak = {
      apiVersion: 'outrigger.dev/v1alpha1',
      kind: 'AgentProfile',
      metadata: { name: 'weak-agent' },
      spec: { ...reference.spec, annotationPrefix: 'weak-agent/', container: { ...container, name: 'weak-agent' }, rbac: undefined },
    };
    let answer = 'created';
    try {
      kubectl(['create', '--dry-run=server', '-f', '-'], JSON.stringify(weak));
    } catch (error) {
      answer = (error as Error).message;
    }
    expect(answer).toContain('securityContext');
    expect(answer).toContain('dangerouslyAllowPodSecurity');
  });
});
