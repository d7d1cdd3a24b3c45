import { describe, expect, it } from 'vitest';
import { agentOf, applyFixture, boundServiceAccounts, createNamespace, eventually, kubectl, type PodJson, pods, runJob } from './support.ts';

const AGENT_IMAGE = 'localhost/outrigger/xxl-agent:local';

/** Ends a Job pod's work (its container waits for /work-done) once the test has read the agent's run: the agent stops with the pod, and its run log with it. */
function finishWork(pod: PodJson, container: string): void {
  kubectl(['exec', '-n', pod.metadata.namespace, pod.metadata.name, '-c', container, '--', 'touch', '/work-done']);
}

/** A job triggered as xxl-job-admin triggers it runs in the agent's target container, through the API with the RBAC the syncer bound. */
async function expectAgentExecs(pod: PodJson): Promise<void> {
  const { namespace, name } = pod.metadata;
  // Until the syncer has bound the ServiceAccount, a run ends with exec refused: trigger again.
  const log = await eventually(async () => {
    const output = await runJob(namespace, name, 'echo outrigger-agent-exec-ok; hostname');
    if (!output.includes('outrigger-agent-exec-ok')) throw new Error(`agent in ${namespace}/${name}: ${output}`);
    return output;
  }, `a job run by the agent in ${namespace}/${name} in its target`);
  // `hostname` in the target container: the pod's own name, so the exec reached the right pod.
  expect(log).toContain(name);
}

describe('workloads on the real node get the agent, and the agent works', () => {
  it('Deployment: every replica runs the agent beside its container, and the agent execs into it', async () => {
    const ns = createNamespace('deploy');
    applyFixture('deployment.yaml', ns);
    kubectl(['rollout', 'status', 'deployment/billing', '-n', ns, '--timeout=180s']);
    const replicas = pods(ns, 'app=billing');
    expect(replicas).toHaveLength(2);
    for (const pod of replicas) {
      expect(pod.spec.containers.map((c) => c.name)).toEqual(['app', 'xxl-agent']);
      expect(agentOf(pod)?.image).toBe(AGENT_IMAGE);
      expect(pod.status.containerStatuses?.every((c) => c.ready)).toBe(true);
      await expectAgentExecs(pod);
    }
    // The syncer bound exactly this namespace's ServiceAccount for the agent.
    expect(boundServiceAccounts()).toContain(`${ns}/default`);
  });

  it('StatefulSet: its pod gets the agent and the agent execs into the named target', async () => {
    const ns = createNamespace('sts');
    applyFixture('statefulset.yaml', ns);
    kubectl(['rollout', 'status', 'statefulset/ledger', '-n', ns, '--timeout=180s']);
    const [pod] = pods(ns, 'app=ledger');
    expect(pod && agentOf(pod)?.image).toBe(AGENT_IMAGE);
    if (pod) await expectAgentExecs(pod);
  });

  it('Job with the native-sidecar profile: the agent is an init container with restartPolicy Always, execs, and the Job completes', async () => {
    const ns = createNamespace('job');
    applyFixture('job.yaml', ns);
    const [running] = await eventually(() => {
      const found = pods(ns, 'app=nightly-report').filter((p) => p.status.phase === 'Running');
      if (found.length === 0) throw new Error('no running pod yet');
      return found;
    }, 'the Job pod to run');
    expect(running && agentOf(running)?.restartPolicy).toBe('Always');
    if (running) {
      await expectAgentExecs(running);
      finishWork(running, 'report');
    }
    kubectl(['wait', '--for=condition=complete', 'job/nightly-report', '-n', ns, '--timeout=180s']);
  });

  it('CronJob: a Job made from it gets the native agent, which execs, and completes', async () => {
    const ns = createNamespace('cron');
    applyFixture('cronjob.yaml', ns);
    kubectl(['create', 'job', 'sweep-now', '--from=cronjob/hourly-sweep', '-n', ns]);
    const [running] = await eventually(() => {
      const found = pods(ns, 'app=hourly-sweep').filter((p) => p.status.phase === 'Running');
      if (found.length === 0) throw new Error('no running pod yet');
      return found;
    }, 'the Job pod to run');
    expect(running && agentOf(running)?.image).toBe(AGENT_IMAGE);
    if (running) {
      await expectAgentExecs(running);
      finishWork(running, 'sweep');
    }
    kubectl(['wait', '--for=condition=complete', 'job/sweep-now', '-n', ns, '--timeout=180s']);
  });
});
