import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { adminStandInAddress, adminStandInCallbacks, adminStandInObjects, awaitRunLog, callExecutor, triggerShellJob, type ExecutorRun, type ShellJobOptions } from '@outrigger/control-plane';
import { ACCESS_TOKEN, agentAddress, agentOf, boundServiceAccounts, createNamespace, eventually, kubectl, kubectlJson, type PodJson } from './support.ts';

// The reference agent's runs on the real node, as xxl-job-admin drives them: timeout, kill and the
// block strategies end the job's processes in the business container; results survive the admin
// being away and an agent restart; the exec guard stops an agent pointed at another pod.
// Each job records what it did in the business container (files under /tmp), which the test reads
// back with its own exec: that is where the job ran, not in the agent.
const { ctr } = inject('cluster');
/** The business container; busybox's image has no /tmp, the jobs' files go to an emptyDir there. */
const APP = { name: 'app', image: 'localhost/busybox:local', imagePullPolicy: 'Never', command: ['sleep', '3600'], volumeMounts: [{ name: 'tmp', mountPath: '/tmp' }] };
const TMP = [{ name: 'tmp', emptyDir: {} }];
const POD = 'worker';

let ns: string;
let address: string;

/** A shell command in the business container of the worker pod, with the test's own (admin) exec. */
const inApp = (script: string) => kubectl(['exec', '-n', ns, POD, '-c', 'app', '--', 'sh', '-c', script]);
const lines = (file: string) => inApp(`cat ${file} 2>/dev/null || true`).split('\n').filter(Boolean);
const adminLog = () => kubectl(['logs', '-n', ns, 'deployment/xxl-job-admin']);
const callbacksOf = (run: ExecutorRun) => adminStandInCallbacks(adminLog()).filter((c) => c.accepted && c.logId === run.logId);

/** The callback of a run once the admin accepted it. */
async function callbackOf(run: ExecutorRun) {
  return eventually(() => {
    const [callback] = callbacksOf(run);
    if (!callback) throw new Error(`no callback for log ${run.logId} yet`);
    return callback;
  }, `the callback of log ${run.logId}`, 120_000);
}

/**
 * A job that records its PID and start, waits until the test releases it (a file), then records its
 * end; `name` is its parameter ($1). The marker comment makes its processes findable with ps.
 */
const GATED = ': xxl-gated-job; echo $$ > /tmp/pid-$1; echo "start $1" >> /tmp/$2.log; while [ ! -e /tmp/release-$1 ]; do sleep 1; done; echo "end $1" >> /tmp/$2.log';
const trigger = (jobId: number, name: string, file: string, options: ShellJobOptions = {}) =>
  triggerShellJob(address, ACCESS_TOKEN, GATED.replaceAll('$2', file), { jobId, codeVersion: 1, params: name, timeoutSeconds: 0, ...options });
const release = (name: string) => inApp(`touch /tmp/release-${name}`);
/** Whether the job with parameter `name` still has a process in the business container. */
const alive = (name: string) => inApp(`kill -0 "$(cat /tmp/pid-${name})" 2>/dev/null && echo alive || echo gone`).trim() === 'alive';
const gatedProcesses = () => inApp('ps').split('\n').filter((l) => l.includes('xxl-gated-job'));

async function startedIn(file: string, name: string): Promise<void> {
  await eventually(() => expect(lines(`/tmp/${file}.log`)).toContain(`start ${name}`), `job ${name} started`, 60_000);
}

beforeAll(async () => {
  ns = createNamespace('xxl-runs');
  kubectl(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: adminStandInObjects(ns) }));
  kubectl(['rollout', 'status', '-n', ns, 'deployment/xxl-job-admin', '--timeout=180s']);
  const annotations = { 'xxl-agent/enable': 'true', 'xxl-agent/job-addr': adminStandInAddress(ns), 'xxl-agent/target-container': 'app', 'xxl-agent/job-name': 'runs' };
  kubectl(['create', '-n', ns, '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: POD, annotations }, spec: { terminationGracePeriodSeconds: 5, containers: [APP], volumes: TMP } }));
  kubectl(['wait', '-n', ns, `pod/${POD}`, '--for=condition=Ready', '--timeout=180s']);
  address = agentAddress(ns, POD);
  // The first run waits for the rbac-syncer's binding of the pod's ServiceAccount.
  await eventually(async () => {
    const log = await awaitRunLog(address, ACCESS_TOKEN, await triggerShellJob(address, ACCESS_TOKEN, 'echo bound'));
    if (!log.includes('bound\n')) throw new Error(log);
  }, 'a first run in the business container');
});
afterAll(() => {
  kubectl(['delete', 'namespace', ns, '--wait=false']);
});

describe('the XXL-JOB agent runs jobs as xxl-job-admin asks, on the real node', () => {
  it('ends a job that outlives its timeout: a timeout in the callback, and its processes gone from the business container', async () => {
    const run = await trigger(21, 'timeout', 'timeout', { timeoutSeconds: 3 });
    const callback = await callbackOf(run);
    expect(callback).toMatchObject({ handleCode: 502, handleMsg: 'job execute timeout' });
    expect(lines('/tmp/timeout.log')).toEqual(['start timeout']);
    expect(alive('timeout')).toBe(false);
    expect(gatedProcesses()).toEqual([]);
    expect(await awaitRunLog(address, ACCESS_TOKEN, run)).toContain('handleCode=502, handleMsg=job execute timeout');
  });

  it('kills a running job on /kill: killed in the callback, its processes gone, the job idle', async () => {
    const run = await trigger(22, 'kill', 'kill');
    await startedIn('kill', 'kill');
    expect((await callExecutor(address, '/idleBeat', { jobId: 22 }, ACCESS_TOKEN)).code).toBe(500);
    expect((await callExecutor(address, '/kill', { jobId: 22 }, ACCESS_TOKEN)).code).toBe(200);
    expect(await callbackOf(run)).toMatchObject({ handleCode: 500, handleMsg: 'job killed by the scheduling center' });
    expect(alive('kill')).toBe(false);
    expect(gatedProcesses()).toEqual([]);
    expect(lines('/tmp/kill.log')).toEqual(['start kill']);
    expect((await callExecutor(address, '/idleBeat', { jobId: 22 }, ACCESS_TOKEN)).code).toBe(200);
  });

  it('SERIAL_EXECUTION queues a second trigger and runs it after the first', async () => {
    const first = await trigger(23, 'serial-a', 'serial');
    await startedIn('serial', 'serial-a');
    const second = await trigger(23, 'serial-b', 'serial');
    // Queued, not started, while the first runs: the file only grows when the test releases a job.
    expect(lines('/tmp/serial.log')).toEqual(['start serial-a']);
    expect((await callExecutor(address, '/idleBeat', { jobId: 23 }, ACCESS_TOKEN)).msg).toBe('job thread is running or has trigger queue.');
    release('serial-a');
    await startedIn('serial', 'serial-b');
    release('serial-b');
    expect(await callbackOf(first)).toMatchObject({ handleCode: 200 });
    expect(await callbackOf(second)).toMatchObject({ handleCode: 200 });
    expect(lines('/tmp/serial.log')).toEqual(['start serial-a', 'end serial-a', 'start serial-b', 'end serial-b']);
  });

  it('DISCARD_LATER refuses a second trigger while the first runs, and runs nothing of it', async () => {
    const first = await trigger(24, 'discard-a', 'discard');
    await startedIn('discard', 'discard-a');
    await expect(trigger(24, 'discard-b', 'discard', { blockStrategy: 'DISCARD_LATER' })).rejects.toThrow('block strategy effect: Discard Later');
    release('discard-a');
    expect(await callbackOf(first)).toMatchObject({ handleCode: 200 });
    expect(lines('/tmp/discard.log')).toEqual(['start discard-a', 'end discard-a']);
    // The refusal was the admin's answer; the agent reports no result for it.
    expect(adminStandInCallbacks(adminLog()).filter((c) => c.logId === first.logId + 1)).toEqual([]);
  });

  it('COVER_EARLY stops the running trigger, whose processes end, and runs the new one', async () => {
    const first = await trigger(25, 'cover-a', 'cover');
    await startedIn('cover', 'cover-a');
    const second = await trigger(25, 'cover-b', 'cover', { blockStrategy: 'COVER_EARLY' });
    expect(await callbackOf(first)).toMatchObject({ handleCode: 500, handleMsg: 'block strategy effect: Cover Early, the running trigger stopped for a new one' });
    await startedIn('cover', 'cover-b');
    expect(alive('cover-a')).toBe(false);
    release('cover-b');
    expect(await callbackOf(second)).toMatchObject({ handleCode: 200 });
    expect(lines('/tmp/cover.log')).toEqual(['start cover-a', 'start cover-b', 'end cover-b']);
  });

  it('loses no result while the admin is away for 30 s, across an agent restart: each arrives once when it is back', async () => {
    await eventually(async () => expect(await pendingCallbacks()).toBe(0), 'every earlier result delivered', 60_000);
    const runs: ExecutorRun[] = [];
    kubectl(['scale', '-n', ns, 'deployment/xxl-job-admin', '--replicas=0']);
    try {
      await eventually(() => expect(kubectlJson<{ items: unknown[] }>(['get', 'pods', '-n', ns, '-l', 'app=xxl-job-admin']).items).toEqual([]), 'the admin gone', 60_000);
      for (const n of [1, 2, 3]) runs.push(await triggerShellJob(address, ACCESS_TOKEN, `echo "away $1" >> /tmp/away.log`, { jobId: 30 + n, params: String(n) }));
      await withAgentLog(eventually(async () => expect(await pendingCallbacks()).toBe(3), 'three results spooled', 60_000));

      // The agent restarts (SIGTERM from the node's containerd, kubelet starts it again): its spool is the pod's emptyDir.
      const restarts = agentRestarts();
      execFileSync(ctr[0] ?? 'ctr', [...ctr.slice(1), 'tasks', 'kill', '--signal', 'SIGTERM', agentContainerId()], { stdio: 'pipe' });
      await eventually(() => expect(agentRestarts()).toBe(restarts + 1), 'the agent restarted', 120_000);
      kubectl(['wait', '-n', ns, `pod/${POD}`, '--for=condition=Ready', '--timeout=180s']);
      await eventually(async () => expect(await pendingCallbacks()).toBe(3), 'the restarted agent holding the three results', 60_000);
      runs.push(await triggerShellJob(address, ACCESS_TOKEN, `echo "away $1" >> /tmp/away.log`, { jobId: 34, params: '4' }));
      await withAgentLog(eventually(async () => expect(await pendingCallbacks()).toBe(4), 'four results spooled', 60_000));
      // Away for 30 s more: the agent's retries meet no admin meanwhile.
      await new Promise((r) => setTimeout(r, 30_000));
      expect(await pendingCallbacks()).toBe(4);
    } finally {
      kubectl(['scale', '-n', ns, 'deployment/xxl-job-admin', '--replicas=1']);
      kubectl(['rollout', 'status', '-n', ns, 'deployment/xxl-job-admin', '--timeout=180s']);
    }
    await eventually(async () => expect(await pendingCallbacks()).toBe(0), 'the spool emptied', 180_000);
    const results = adminStandInCallbacks(adminLog()).filter((c) => runs.some((r) => r.logId === c.logId));
    expect(results.map((c) => c.logId).sort()).toEqual(runs.map((r) => r.logId).sort());
    expect(results.every((c) => c.accepted && c.handleCode === 200)).toBe(true);
    // Four jobs of their own: they may run in any order.
    expect(lines('/tmp/away.log').sort()).toEqual(['away 1', 'away 2', 'away 3', 'away 4']);
  });
});

/** A failed wait on the agent, with the agent's recent log: what it did with each run and callback. */
async function withAgentLog<T>(wait: Promise<T>): Promise<T> {
  try {
    return await wait;
  } catch (error) {
    const name = agentOf(kubectlJson<PodJson>(['get', 'pod', POD, '-n', ns]))?.name ?? '';
    throw new Error(`${(error as Error).message}\nthe agent's log:\n${kubectl(['logs', '-n', ns, POD, '-c', name, '--tail=200'])}`, { cause: error });
  }
}

async function pendingCallbacks(): Promise<number> {
  const response = await fetch(`${new URL(address).origin}/metrics`, { signal: AbortSignal.timeout(10_000) });
  const match = /^xxl_agent_callbacks_pending (\d+)$/m.exec(await response.text());
  if (!match) throw new Error('no xxl_agent_callbacks_pending in the agent\'s metrics');
  return Number(match[1]);
}

/** The agent container's restart count and containerd id. */
function agentStatus(): { restartCount: number; containerId: string } {
  const name = agentOf(kubectlJson<PodJson>(['get', 'pod', POD, '-n', ns]))?.name ?? '';
  const [restarts, id] = kubectl(['get', 'pod', POD, '-n', ns, '-o', `jsonpath={.status.containerStatuses[?(@.name=="${name}")].restartCount} {.status.containerStatuses[?(@.name=="${name}")].containerID}`]).split(' ');
  if (!id) throw new Error(`no agent container status in ${ns}/${POD}`);
  return { restartCount: Number(restarts), containerId: id.replace(/^containerd:\/\//, '') };
}
const agentRestarts = () => agentStatus().restartCount;
const agentContainerId = () => agentStatus().containerId;

describe('the exec guard on the real node: an agent pointed at another pod runs nothing there', () => {
  it('a tenant pod running the agent with its target forged to another tenant\'s pod, or to a neighbour in its own namespace, gets the guard\'s refusal in its run, while the real agent reaches its own pod', async () => {
    const other = createNamespace('xxl-victim');
    try {
      kubectl(['create', '-n', other, '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'victim' }, spec: { containers: [APP], volumes: TMP } }));
      kubectl(['wait', '-n', other, 'pod/victim', '--for=condition=Ready', '--timeout=180s']);
      // The tenant runs the agent's own image in a pod of its own (not opted in: the injector
      // refuses a forged agent in an opted-in pod), under the ServiceAccount the syncer bound for
      // its real agent, with the target its env names.
      expect(boundServiceAccounts()).toContain(`${ns}/default`);
      const image = agentOf(kubectlJson<PodJson>(['get', 'pod', POD, '-n', ns]))?.image ?? '';
      const rogue = (name: string, targetNamespace: string, targetPod: string) => ({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name },
        spec: {
          serviceAccountName: 'default',
          containers: [
            {
              name: 'runner',
              image,
              imagePullPolicy: 'Never',
              env: [
                { name: 'XXL_JOB_ADDR', value: adminStandInAddress(ns) },
                { name: 'XXL_JOB_NAME', value: name },
                { name: 'XXL_JOB_ACCESS_TOKEN', value: ACCESS_TOKEN },
                { name: 'NAMESPACE', value: targetNamespace },
                { name: 'POD_NAME', value: targetPod },
                { name: 'CONTAINER_NAME', value: 'app' },
                { name: 'POD_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
                { name: 'XXL_AGENT_DATA_DIR', value: '/data' },
              ],
              volumeMounts: [{ name: 'data', mountPath: '/data' }],
              readinessProbe: { httpGet: { path: '/readyz', port: 9999 } },
            },
          ],
          volumes: [{ name: 'data', emptyDir: {} }],
        },
      });
      for (const [name, targetNamespace, targetPod] of [['rogue', other, 'victim'], ['neighbour', ns, POD]] as const) {
        kubectl(['create', '-n', ns, '-f', '-'], JSON.stringify(rogue(name, targetNamespace, targetPod)));
        kubectl(['wait', '-n', ns, `pod/${name}`, '--for=condition=Ready', '--timeout=180s']);
      }
      const script = 'echo "reached $(hostname)" > /tmp/reached; echo "reached $(hostname)"';

      const rogueAddress = agentAddress(ns, 'rogue', 'runner');
      const refusedRun = await triggerShellJob(rogueAddress, ACCESS_TOKEN, script);
      const refused = await awaitRunLog(rogueAddress, ACCESS_TOKEN, refusedRun);
      expect(refused).toContain(`outrigger exec guard: system:serviceaccount:${ns}:default holds an agent role through ClusterRoleBinding xxl-agent-exec.${ns}, which reaches only pods of its own namespace ${ns}; exec into ${other}/victim is refused`);
      expect(refused).not.toContain('reached victim');
      expect(await callbackOf(refusedRun)).toMatchObject({ handleCode: 500 });
      expect(kubectl(['exec', '-n', other, 'victim', '-c', 'app', '--', 'sh', '-c', 'ls /tmp/reached 2>&1 || true'])).toContain('No such file');

      // Its own namespace, the same ServiceAccount, a real token of its pod: still not its pod.
      const neighbour = agentAddress(ns, 'neighbour', 'runner');
      const beside = await awaitRunLog(neighbour, ACCESS_TOKEN, await triggerShellJob(neighbour, ACCESS_TOKEN, script));
      expect(beside).toContain(`outrigger exec guard: system:serviceaccount:${ns}:default holds an agent role through ClusterRoleBinding xxl-agent-exec.${ns}, which reaches only the pod its token was issued to (${ns}/neighbour); exec into ${ns}/${POD} is refused`);
      expect(beside).not.toContain(`reached ${POD}`);
      expect(inApp('ls /tmp/reached 2>&1 || true')).toContain('No such file');

      const own = await awaitRunLog(address, ACCESS_TOKEN, await triggerShellJob(address, ACCESS_TOKEN, script, { jobId: 40 }));
      expect(own).toContain(`reached ${POD}`);
    } finally {
      kubectl(['delete', 'namespace', other, '--wait=false']);
    }
  });
});
