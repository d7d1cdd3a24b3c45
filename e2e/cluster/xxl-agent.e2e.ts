import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminStandInAddress, adminStandInCalls, adminStandInObjects, callExecutor, triggerShellJob } from '@outrigger/control-plane';
import { ACCESS_TOKEN, agentAddress, createNamespace, eventually, kubectl, kubectlJson, runJob, scaleOutrigger } from './support.ts';

// The reference agent (apps/xxl-agent) as the reference profile runs it on the real node, with an
// xxl-job-admin stand-in in the namespace: registration, runs in the business container, the
// access token in both directions, a missing Secret, an unbound ServiceAccount.
const annotations = (ns: string, jobName: string) => ({
  'xxl-agent/enable': 'true',
  'xxl-agent/job-addr': adminStandInAddress(ns),
  'xxl-agent/target-container': 'app',
  'xxl-agent/job-name': jobName,
});
/** A mark only the business container has (exec'd processes get the container's env): the agent's own image holds nothing but the agent. */
const APP = { name: 'app', image: 'localhost/busybox:local', imagePullPolicy: 'Never', env: [{ name: 'MARK', value: 'business-container' }], command: ['sleep', '3600'] };
const createPod = (ns: string, name: string, jobName = name) =>
  kubectl(['create', '-n', ns, '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name, annotations: annotations(ns, jobName) }, spec: { terminationGracePeriodSeconds: 5, containers: [APP] } }));
const ready = (ns: string, name: string) => kubectl(['wait', '-n', ns, `pod/${name}`, '--for=condition=Ready', '--timeout=180s']);
const adminLog = (ns: string) => kubectl(['logs', '-n', ns, 'deployment/xxl-job-admin']);
const podIp = (ns: string, name: string) => kubectl(['get', 'pod', name, '-n', ns, '-o', 'jsonpath={.status.podIP}']);

let ns: string;
beforeAll(async () => {
  ns = createNamespace('xxl-agent');
  kubectl(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: adminStandInObjects(ns) }));
  kubectl(['rollout', 'status', '-n', ns, 'deployment/xxl-job-admin', '--timeout=180s']);
  createPod(ns, 'worker');
  ready(ns, 'worker');
});
afterAll(() => {
  kubectl(['delete', 'namespace', ns, '--wait=false']);
});

describe('the XXL-JOB agent on the real node', () => {
  it('registers with the admin at its pod IP under its executor key, with the token, and removes itself when the pod goes', async () => {
    createPod(ns, 'short-lived');
    ready(ns, 'short-lived');
    const address = agentAddress(ns, 'short-lived');
    expect(address).toMatch(new RegExp(`^http://${podIp(ns, 'short-lived').replaceAll('.', '\\.')}:9999/[0-9a-f]{32}$`));
    const value = `"registryValue":"${address}/"`;
    await eventually(() => {
      const registrations = adminStandInCalls(adminLog(ns), '/api/registry').filter((l) => l.includes(value));
      expect(registrations[0]).toMatch(/^admin accepted POST \/api\/registry .*"registryGroup":"EXECUTOR".*"registryKey":"short-lived"/);
    }, 'the registration', 60_000);
    kubectl(['delete', 'pod', '-n', ns, 'short-lived', '--wait=true']);
    await eventually(() => {
      expect(adminStandInCalls(adminLog(ns), '/api/registryRemove').filter((l) => l.includes(value))[0]).toMatch(/^admin accepted POST /);
    }, 'the registration removed', 30_000);
  });

  it('runs a job in the business container and reports its result to the admin', async () => {
    const log = await eventually(async () => {
      const output = await runJob(ns, 'worker', 'echo "mark: $MARK"');
      if (!output.includes('mark: business-container')) throw new Error(output);
      return output;
    }, 'a run in the business container');
    expect(log).toContain('business-container');
    await eventually(() => {
      const callbacks = adminStandInCalls(adminLog(ns), '/api/callback');
      expect(callbacks.some((l) => l.startsWith('admin accepted POST') && l.includes('"handleCode":200'))).toBe(true);
    }, 'the callback', 60_000);
  });

  it('refuses a call without the token or with another one, and runs nothing', async () => {
    const address = agentAddress(ns, 'worker');
    for (const token of [undefined, `${ACCESS_TOKEN}-not`]) {
      await expect(triggerShellJob(address, token, 'echo should-not-run')).rejects.toThrow(/The access token is wrong\./);
      expect((await callExecutor(address, '/beat', {}, token)).msg).toBe('The access token is wrong.');
    }
    expect((await callExecutor(address, '/beat', {}, ACCESS_TOKEN)).code).toBe(200);
  });

  it("runs nothing for another tenant's pod that holds the same access token and reaches its port: only the address it registered answers", async () => {
    // xxl-job-admin has one token for every executor, so every labelled namespace's Secret holds the same one.
    const other = createNamespace('xxl-agent-other');
    try {
      kubectl(['run', 'caller', '-n', other, '--image=localhost/busybox:local', '--image-pull-policy=Never', '--restart=Never', '--command', '--', 'sleep', '3600']);
      kubectl(['wait', '-n', other, 'pod/caller', '--for=condition=Ready', '--timeout=180s']);
      const post = (url: string, body: object) =>
        kubectl(['exec', '-n', other, 'caller', '--', 'wget', '-q', '-O-', '--header', `XXL-JOB-ACCESS-TOKEN: ${ACCESS_TOKEN}`, '--header', 'Content-Type: application/json', '--post-data', JSON.stringify(body), url]);
      const trigger = { jobId: 77, logId: 7701, logDateTime: Date.now(), glueType: 'GLUE_SHELL', glueSource: 'touch /tmp/taken-over', glueUpdatetime: 1, executorBlockStrategy: 'SERIAL_EXECUTION', executorTimeout: 0, broadcastIndex: 0, broadcastTotal: 1 };
      const ip = podIp(ns, 'worker');
      const refusedCalls = () => {
        const metrics = kubectl(['exec', '-n', other, 'caller', '--', 'wget', '-q', '-O-', `http://${ip}:9999/metrics`]);
        const count = /^xxl_agent_refused_calls_total\{reason="address"\} (\d+)$/m.exec(metrics)?.[1];
        if (count === undefined) throw new Error(`no refused-calls count in the agent's metrics:\n${metrics}`);
        return Number(count);
      };
      const before = refusedCalls();
      for (const path of ['/run', `/${'0'.repeat(32)}/run`]) expect(post(`http://${ip}:9999${path}`, trigger)).toContain(`uri-mapping(${path}) not found`);
      expect(refusedCalls()).toBe(before + 2);
      // The control: the same pod, token and network path, at the address the agent registered.
      expect(JSON.parse(post(`${agentAddress(ns, 'worker')}/beat`, {}))).toMatchObject({ code: 200 });
      expect(kubectl(['exec', '-n', ns, 'worker', '-c', 'app', '--', 'sh', '-c', 'ls /tmp/taken-over 2>&1 || true'])).toContain('No such file');
    } finally {
      kubectl(['delete', 'namespace', other, '--wait=false']);
    }
  });

  it('is refused by an admin that holds another token: it sends its own on every call', async () => {
    // The admin's Secret changes; the running admin reads it at start, so restart it.
    kubectl(['patch', 'secret', 'xxl-job-access-token', '-n', ns, '--type=merge', '-p', JSON.stringify({ stringData: { token: 'another-token' } })]);
    kubectl(['rollout', 'restart', '-n', ns, 'deployment/xxl-job-admin']);
    kubectl(['rollout', 'status', '-n', ns, 'deployment/xxl-job-admin', '--timeout=180s']);
    // The restarted admin's log holds only its own calls: the agent's next registration (every 30 s) carries the agent's token, which it refuses.
    await eventually(() => {
      expect(adminStandInCalls(adminLog(ns), '/api/registry').some((l) => l.startsWith('admin refused POST') && l.includes('"registryKey":"worker"'))).toBe(true);
    }, 'the registration refused', 90_000);
    kubectl(['patch', 'secret', 'xxl-job-access-token', '-n', ns, '--type=merge', '-p', JSON.stringify({ stringData: { token: ACCESS_TOKEN } })]);
    kubectl(['rollout', 'restart', '-n', ns, 'deployment/xxl-job-admin']);
    kubectl(['rollout', 'status', '-n', ns, 'deployment/xxl-job-admin', '--timeout=180s']);
  });

  it('does not start without the Secret, and the pod says which Secret is missing', async () => {
    const bare = createNamespace('xxl-agent-no-secret');
    try {
      kubectl(['delete', 'secret', 'xxl-job-access-token', '-n', bare]);
      createPod(bare, 'lonely');
      await eventually(() => {
        const events = kubectlJson<{ items: { message?: string }[] }>(['get', 'events', '-n', bare, '--field-selector', 'involvedObject.name=lonely']);
        expect(events.items.map((e) => e.message ?? '').join('\n')).toContain('secret "xxl-job-access-token" not found');
      }, 'the missing Secret in the pod\'s events', 60_000);
    } finally {
      kubectl(['delete', 'namespace', bare, '--wait=false']);
    }
  });

  it('reports an unbound ServiceAccount in the run\'s log, and runs once it is bound again', async () => {
    await scaleOutrigger('outrigger-rbac-syncer', 0);
    try {
      kubectl(['delete', 'clusterrolebinding', `xxl-agent-exec.${ns}`]);
      const log = await eventually(async () => {
        const output = await runJob(ns, 'worker', 'echo should-not-run');
        if (!output.includes('not bound')) throw new Error(output);
        return output;
      }, 'the run refused for want of RBAC', 60_000);
      expect(log).not.toContain('should-not-run\n');
      expect(log).toMatch(/forbidden/i);
    } finally {
      await scaleOutrigger('outrigger-rbac-syncer', 2);
    }
    await eventually(async () => {
      const output = await runJob(ns, 'worker', 'echo "mark: $MARK"');
      if (!output.includes('mark: business-container')) throw new Error(output);
    }, 'the agent to run again once the syncer bound it');
  });
});
