import { describe, expect, it } from 'vitest';
import { applyFixture, boundServiceAccounts, createNamespace, eventually, execAs, kubectl, OUTRIGGER_NAMESPACE, pods } from './support.ts';

const OPT_IN = { 'xxl-agent/enable': 'true', 'xxl-agent/job-addr': 'http://admin:8080', 'xxl-agent/target-container': 'app', 'xxl-agent/job-name': 'tenancy' };
const APP = { name: 'app', image: 'localhost/busybox:local', command: ['sleep', '3600'] };

const boundNamespaces = () => boundServiceAccounts();

function podJson(name: string, annotations: Record<string, string>, containers: object[], serviceAccountName = 'default'): string {
  return JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name, annotations }, spec: { serviceAccountName, containers } });
}

describe("tenants: an agent's reach stops at its own pod, and only real agents are bound", () => {
  it('the webhook refuses an opted-in pod that forges its agent, saying why', () => {
    const ns = createNamespace('forged');
    const refusal = (name: string, annotations: Record<string, string>, containers: object[]) => {
      try {
        kubectl(['create', '-n', ns, '--dry-run=server', '-f', '-'], podJson(name, annotations, containers));
        return 'created';
      } catch (error) {
        return (error as Error).message;
      }
    };
    expect(refusal('status-only', { ...OPT_IN, 'xxl-agent/status': '{"profile":"xxl-job"}' }, [APP])).toContain(
      'annotation xxl-agent/status is set but the pod has no xxl-agent container; only the injector writes it',
    );
    expect(refusal('impostor', OPT_IN, [APP, { name: 'xxl-agent', image: 'localhost/busybox:local' }])).toContain(
      'container xxl-agent has the name of the profile\'s agent but is not it (image "localhost/busybox:local"',
    );
    expect(refusal('own-agent', OPT_IN, [APP, { name: 'xxl-agent', image: 'localhost/outrigger/xxl-agent:local' }])).toContain(
      'the pod brings its own xxl-agent container; the injector adds the agent',
    );
  });

  it("a tenant's agent execs into its own pod only: its neighbour of the same Deployment, kube-system, the install namespace, another tenant and default refuse it, as does a token bound to no pod", async () => {
    const tenant = createNamespace('tenant-a');
    const other = createNamespace('tenant-b');
    applyFixture('deployment.yaml', tenant);
    kubectl(['rollout', 'status', 'deployment/billing', '-n', tenant, '--timeout=180s']);
    await eventually(() => {
      if (!boundNamespaces().includes(`${tenant}/default`)) throw new Error(`not bound yet: ${boundNamespaces().join(' ')}`);
    }, 'the tenant ServiceAccount bound');
    const [own, neighbour] = pods(tenant, 'app=billing').map((pod) => pod.metadata.name) as [string, string];
    // As the agent of `own` calls: its token is bound to its pod.
    const fromOwn = { fromPod: own };
    // kubectl reads the pod before it execs (the agent does not): a reader grant that is not Outrigger's.
    kubectl(['create', 'clusterrole', `pod-reader-${tenant}`, '--verb=get', '--resource=pods']);
    kubectl(['create', 'clusterrolebinding', `pod-reader-${tenant}`, `--clusterrole=pod-reader-${tenant}`, `--serviceaccount=${tenant}:default`, `--serviceaccount=${other}:ops`]);
    // The API server authorizes from its own cache of the grant, a moment after it is created.
    await eventually(() => expect(execAs(`${tenant}:default`, tenant, own, { ...fromOwn, container: 'app' })).toContain('exec-reached-the-pod'), 'the reader grant in force', 30_000);
    // The other replica runs under the same ServiceAccount, bound the same way: still not this agent's pod.
    const next = execAs(`${tenant}:default`, tenant, neighbour, { ...fromOwn, container: 'app' });
    expect(next).toContain(`reaches only the pod its token was issued to (${tenant}/${own}); exec into ${tenant}/${neighbour} is refused`);
    // A token of the ServiceAccount bound to no pod (a legacy Secret, a TokenRequest without a pod) reaches no pod at all.
    expect(execAs(`${tenant}:default`, tenant, own, { container: 'app' })).toContain(`reaches only the pod its token was issued to (this token was issued to no pod); exec into ${tenant}/${own} is refused`);

    kubectl(['create', '-n', other, '-f', '-'], podJson('victim', {}, [APP]));
    kubectl(['create', '-n', 'default', '-f', '-'], podJson(`victim-${tenant}`, {}, [APP]));
    kubectl(['create', '-n', 'kube-system', '-f', '-'], podJson(`victim-${tenant}`, {}, [APP]));
    const injector = kubectl(['get', 'pods', '-n', OUTRIGGER_NAMESPACE, '-l', 'app.kubernetes.io/name=outrigger-injector', '-o', 'jsonpath={.items[0].metadata.name}']);
    const targets: [string, string][] = [[other, 'victim'], ['default', `victim-${tenant}`], ['kube-system', `victim-${tenant}`], [OUTRIGGER_NAMESPACE, injector]];
    for (const [namespace, pod] of targets) {
      const out = execAs(`${tenant}:default`, namespace, pod, fromOwn);
      expect(out, `exec into ${namespace}/${pod}`).toContain('outrigger exec guard:');
      expect(out).toContain(`reaches only pods of its own namespace ${tenant}; exec into ${namespace}/${pod} is refused`);
    }
    // Someone else's exec is not Outrigger's business: an operator with its own cluster-wide grant.
    kubectl(['create', 'serviceaccount', 'ops', '-n', other]);
    kubectl(['create', 'clusterrolebinding', `ops-${other}`, '--clusterrole=xxl-agent-exec', `--serviceaccount=${other}:ops`]);
    try {
      await eventually(() => {
        const out = execAs(`${other}:ops`, tenant, own, { container: 'app' });
        if (!out.includes('exec-reached-the-pod')) throw new Error(out);
      }, 'the operator exec');
    } finally {
      kubectl(['delete', 'clusterrolebinding', `ops-${other}`, `pod-reader-${tenant}`]);
      kubectl(['delete', 'clusterrole', `pod-reader-${tenant}`]);
      kubectl(['delete', 'pod', '-n', 'default', `victim-${tenant}`, '--wait=false']);
      kubectl(['delete', 'pod', '-n', 'kube-system', `victim-${tenant}`, '--wait=false']);
    }
  });

  it('a pod opted in by an UPDATE gets a warning, no agent and no binding', async () => {
    const ns = createNamespace('late');
    kubectl(['create', 'serviceaccount', 'late', '-n', ns]);
    kubectl(['create', '-n', ns, '-f', '-'], podJson('late', {}, [APP], 'late'));
    // --warnings-as-errors: kubectl exits non-zero on the warning (the change itself is applied).
    const annotate = () => kubectl(['annotate', '-n', ns, 'pod', 'late', '--warnings-as-errors', ...Object.entries(OPT_IN).map(([k, v]) => `${k}=${v}`)]);
    expect(annotate).toThrow(
      'outrigger: xxl-agent/enable added after the pod was created: agents are injected only at creation, so this change adds no agent, and the rbac-syncer binds nothing for a pod whose agent was not injected at creation',
    );
    expect(kubectl(['get', 'pod', 'late', '-n', ns, '-o', 'jsonpath={.metadata.annotations.xxl-agent/enable}'])).toBe('true');
    // The control: a real agent created after the UPDATE is bound, so the syncer has seen both.
    kubectl(['create', '-n', ns, '-f', '-'], podJson('control', OPT_IN, [APP]));
    await eventually(() => {
      if (!boundNamespaces().includes(`${ns}/default`)) throw new Error(`control not bound yet: ${boundNamespaces().join(' ')}`);
    }, 'the control pod bound');
    expect(boundNamespaces()).not.toContain(`${ns}/late`);
    expect(kubectl(['get', 'pod', 'late', '-n', ns, '-o', 'jsonpath={.spec.containers[*].name}'])).toBe('app');
  });
});
