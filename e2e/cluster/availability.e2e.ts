import { X509Certificate } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { churnPods, type ChurnResult } from './pod-churn.ts';
import { applyFixture, boundServiceAccounts, createNamespace, eventually, kubectl, kubectlAsync, OUTRIGGER_NAMESPACE } from './support.ts';

// failurePolicy Fail: every failed call to the webhook is a pod that could not be created. These tests
// create pods continuously while certificates rotate and services restart, and count.
const ROTATION_MS = Number(process.env.CLUSTER_ROTATION_MS ?? 150_000);
const ns = (name: string) => ['-n', OUTRIGGER_NAMESPACE, name];

function report(what: string, result: ChurnResult, extra = ''): void {
  console.log(`${what}: ${result.created} pods created, ${result.failed} failed, ${result.withoutAgent} without the agent${extra}${result.errors.length ? `; errors: ${result.errors.join(' | ')}` : ''}`);
}

function secretCert(name: string, key: string): string {
  const b64 = kubectl(['get', 'secret', ...ns(name), '-o', `jsonpath={.data.${key.replace('.', '\\.')}}`]);
  return b64 ? new X509Certificate(Buffer.from(b64, 'base64')).fingerprint256 : '';
}

/** Scales a Deployment between 1 and 3 replicas until `until` resolves: the ReplicaSet controller's own creates. */
async function scaleContinuously(namespace: string, until: Promise<unknown>): Promise<void> {
  let done = false;
  void until.finally(() => (done = true));
  for (let replicas = 3; !done; replicas = replicas === 3 ? 1 : 3) {
    await kubectlAsync(['scale', 'deployment/billing', '-n', namespace, `--replicas=${replicas}`]);
    await new Promise((r) => setTimeout(r, 4_000));
  }
}

function failedCreates(namespace: string): string[] {
  return kubectl(['get', 'events', '-n', namespace, '--field-selector', 'reason=FailedCreate', '-o', 'jsonpath={range .items[*]}{.message}{"\\n"}{end}'])
    .split('\n')
    .filter(Boolean);
}

/** A rolling restart, over only when the old pods are gone too: their termination is part of it. */
async function rolloutRestart(deployment: string): Promise<void> {
  await kubectlAsync(['rollout', 'restart', `deployment/${deployment}`, '-n', OUTRIGGER_NAMESPACE]);
  await kubectlAsync(['rollout', 'status', `deployment/${deployment}`, '-n', OUTRIGGER_NAMESPACE, '--timeout=300s']);
  await eventually(async () => {
    const pods = (await kubectlAsync(['get', 'pods', '-n', OUTRIGGER_NAMESPACE, '-l', `app.kubernetes.io/name=${deployment}`, '-o', 'name'])).split('\n').filter(Boolean);
    if (pods.length !== 2) throw new Error(`${pods.length} pods of ${deployment}, old ones still terminating`);
  }, `the old pods of ${deployment} to be gone`, 120_000);
}

function leaseHolder(name: string): string {
  return kubectl(['get', 'lease', ...ns(name), '-o', 'jsonpath={.spec.holderIdentity}']);
}

describe('availability under continuous pod creation (failurePolicy Fail)', () => {
  let work: string;

  beforeAll(() => {
    work = createNamespace('load');
    applyFixture('deployment.yaml', work);
    kubectl(['rollout', 'status', 'deployment/billing', '-n', work, '--timeout=180s']);
  });

  it('rolling restart of the injector (2 replicas, maxUnavailable 0, preStop): no create fails', async () => {
    const restart = rolloutRestart('outrigger-injector');
    const result = await churnPods(work, restart);
    await restart;
    report('injector rolling restart', result);
    expect(result.created).toBeGreaterThan(0);
    expect(result.failed).toBe(0);
    expect(result.withoutAgent).toBe(0);
  });

  it('rolling restart of the cert-manager: the Lease moves to a new pod, no create fails', async () => {
    const before = leaseHolder('outrigger-cert-manager');
    const restart = rolloutRestart('outrigger-cert-manager');
    const result = await churnPods(work, restart);
    await restart;
    report('cert-manager rolling restart', result);
    const after = await eventually(() => {
      const holder = leaseHolder('outrigger-cert-manager');
      if (!holder || holder === before) throw new Error(`lease still held by ${holder || 'nobody'}`);
      return holder;
    }, 'a new cert-manager leader', 60_000);
    expect(after).not.toBe(before);
    expect(result.failed).toBe(0);
    expect(result.withoutAgent).toBe(0);
  });

  it('rolling restart of the rbac-syncer: the new leader keeps binding new agents, no create fails', async () => {
    const before = leaseHolder('outrigger-rbac-syncer');
    const restart = rolloutRestart('outrigger-rbac-syncer');
    const result = await churnPods(work, restart);
    await restart;
    report('rbac-syncer rolling restart', result);
    await eventually(() => {
      const holder = leaseHolder('outrigger-rbac-syncer');
      if (!holder || holder === before) throw new Error(`lease still held by ${holder || 'nobody'}`);
    }, 'a new rbac-syncer leader', 60_000);
    const fresh = createNamespace('after-handover');
    applyFixture('deployment.yaml', fresh);
    await eventually(() => {
      const subjects = boundServiceAccounts().map((s) => s.split('/')[0]);
      if (!subjects.includes(fresh)) throw new Error(`${fresh} not bound yet: ${subjects.join(' ')}`);
    }, 'the new leader to bind a new namespace', 60_000);
    expect(result.failed).toBe(0);
  });

  describe('certificate rotation, leaf and CA, while pods are created and a Deployment scales', () => {
    beforeAll(async () => {
      // Short lifetimes, and certificates issued afresh under them: the CA then comes due within the window.
      kubectl(['set', 'env', 'deployment/outrigger-cert-manager', '-n', OUTRIGGER_NAMESPACE, 'CA_LIFETIME=4m', 'LEAF_LIFETIME=3m', 'SETTLE=5s', 'RECHECK=5s']);
      kubectl(['rollout', 'status', 'deployment/outrigger-cert-manager', '-n', OUTRIGGER_NAMESPACE, '--timeout=300s']);
      // Only once no pod of the old configuration is left (one could still lead while terminating).
      await eventually(() => {
        const envs = kubectl(['get', 'pods', '-n', OUTRIGGER_NAMESPACE, '-l', 'app.kubernetes.io/name=outrigger-cert-manager', '-o', 'jsonpath={range .items[*]}{.spec.containers[0].env[*].name}{"\\n"}{end}']);
        const pods = envs.split('\n').filter(Boolean);
        if (pods.length !== 2 || pods.some((names) => !names.includes('CA_LIFETIME'))) throw new Error(`cert-manager pods: ${pods.length}, some of the old configuration`);
      }, 'the old cert-manager pods to be gone', 120_000);
      kubectl(['delete', 'secret', '-n', OUTRIGGER_NAMESPACE, 'outrigger-webhook-ca', 'outrigger-injector-tls']);
      await eventually(() => {
        const ca = Buffer.from(kubectl(['get', 'secret', ...ns('outrigger-webhook-ca'), '-o', 'jsonpath={.data.ca\\.crt}']), 'base64');
        const validTo = new Date(new X509Certificate(ca).validTo).getTime();
        if (validTo - Date.now() > 10 * 60_000) throw new Error('the CA is not the short-lived one yet');
        kubectl(['create', '-n', work, '--dry-run=server', '-f', '-'], JSON.stringify({
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name: 'probe', annotations: { 'xxl-agent/enable': 'true', 'xxl-agent/job-addr': 'http://a:1', 'xxl-agent/target-container': 'app', 'xxl-agent/job-name': 'p' } },
          spec: { containers: [{ name: 'app', image: 'localhost/busybox:local' }] },
        }));
      }, 'the webhook to serve under the new short-lived CA', 180_000);
    });

    afterAll(() => {
      kubectl(['set', 'env', 'deployment/outrigger-cert-manager', '-n', OUTRIGGER_NAMESPACE, 'CA_LIFETIME-', 'LEAF_LIFETIME-', 'SETTLE-', 'RECHECK-']);
      kubectl(['rollout', 'status', 'deployment/outrigger-cert-manager', '-n', OUTRIGGER_NAMESPACE, '--timeout=300s']);
    });

    it('no create fails, every pod has its agent, and both the leaf and the CA rotate', async () => {
      const eventsBefore = failedCreates(work).length;
      const leaves = new Set<string>();
      const cas = new Set<string>();
      const window = new Promise((r) => setTimeout(r, ROTATION_MS));
      const watch = (async () => {
        let done = false;
        void window.finally(() => (done = true));
        while (!done) {
          leaves.add(secretCert('outrigger-injector-tls', 'tls.crt'));
          cas.add(secretCert('outrigger-webhook-ca', 'ca.crt'));
          await new Promise((r) => setTimeout(r, 2_000));
        }
      })();
      const [result] = await Promise.all([churnPods(work, window), scaleContinuously(work, window), watch]);
      leaves.delete('');
      cas.delete('');
      const failedEvents = failedCreates(work).slice(eventsBefore);
      report('certificate rotation', result, `, ${leaves.size} serving certificates and ${cas.size} CAs seen, ${failedEvents.length} FailedCreate events`);
      expect(result.created).toBeGreaterThan(0);
      expect(result.failed).toBe(0);
      expect(result.withoutAgent).toBe(0);
      expect(failedEvents).toEqual([]);
      expect(leaves.size).toBeGreaterThanOrEqual(3);
      expect(cas.size).toBeGreaterThanOrEqual(2);
    });
  });

  it('an injector pod killed outright (grace period 0) under load: what the API server saw', async () => {
    const victim = kubectl(['get', 'pods', '-n', OUTRIGGER_NAMESPACE, '-l', 'app.kubernetes.io/name=outrigger-injector', '-o', 'jsonpath={.items[0].metadata.name}']);
    const window = new Promise((r) => setTimeout(r, 30_000));
    const churn = churnPods(work, window);
    await new Promise((r) => setTimeout(r, 5_000));
    await kubectlAsync(['delete', 'pod', victim, '-n', OUTRIGGER_NAMESPACE, '--grace-period=0', '--force']);
    const result = await churn;
    // Not zero by design: calls in flight to the killed pod, and calls routed to it until its endpoint is removed, fail.
    report('injector pod force-deleted', result);
    expect(result.created).toBeGreaterThan(0);
    expect(result.withoutAgent).toBe(0);
    kubectl(['rollout', 'status', 'deployment/outrigger-injector', '-n', OUTRIGGER_NAMESPACE, '--timeout=180s']);
    const after = await churnPods(work, new Promise((r) => setTimeout(r, 5_000)));
    expect(after.failed).toBe(0);
  });
});
