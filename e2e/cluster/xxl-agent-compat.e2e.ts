import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { adminStandInAddress, adminStandInObjects } from '@outrigger/control-plane';
import { ACCESS_TOKEN, agentAddress, createNamespace, eventually, kubectl, runJob } from './support.ts';

// xxl-job-admin's own executor client (xxl-job-core, apps/xxl-agent/compat, Maven) against the
// reference agent in an opted-in pod on the real node; the agent's registry and callback requests,
// as the in-cluster admin stand-in received them, decoded with that library's models.
const { kubeconfigPath, binDir } = inject('cluster');
const COMPAT = join(import.meta.dirname, '..', '..', 'apps', 'xxl-agent', 'compat');
const APP = { name: 'app', image: 'localhost/busybox:local', imagePullPolicy: 'Never', env: [{ name: 'MARK', value: 'business-container' }], command: ['sleep', '3600'] };
const POD = 'compat';
const APP_NAME = 'compat-app';

let ns: string;
beforeAll(async () => {
  ns = createNamespace('xxl-compat');
  kubectl(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: adminStandInObjects(ns) }));
  kubectl(['rollout', 'status', '-n', ns, 'deployment/xxl-job-admin', '--timeout=180s']);
  const annotations = { 'xxl-agent/enable': 'true', 'xxl-agent/job-addr': adminStandInAddress(ns), 'xxl-agent/target-container': 'app', 'xxl-agent/job-name': APP_NAME };
  kubectl(['create', '-n', ns, '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: POD, annotations }, spec: { terminationGracePeriodSeconds: 5, containers: [APP] } }));
  kubectl(['wait', '-n', ns, `pod/${POD}`, '--for=condition=Ready', '--timeout=180s']);
  // The driver's runs must not meet a ServiceAccount the rbac-syncer has not bound yet.
  await eventually(async () => {
    const log = await runJob(ns, POD, 'echo bound');
    if (!log.includes('bound\n')) throw new Error(log);
  }, 'a first run in the business container');
});
afterAll(() => {
  kubectl(['delete', 'namespace', ns, '--wait=false']);
});

describe("xxl-job-core's client against the agent in the local cluster", () => {
  it('beat, idleBeat, run, kill and log; registry and callbacks decoded with its models; removal when the pod goes', async () => {
    const kubectlCommand = `'${join(binDir, 'kubectl')}' --kubeconfig '${kubeconfigPath}'`;
    const properties = {
      'agent.address': agentAddress(ns, POD),
      'agent.token': ACCESS_TOKEN,
      'agent.appName': APP_NAME,
      'admin.log.command': `${kubectlCommand} logs -n ${ns} deployment/xxl-job-admin`,
      'agent.stop.command': `${kubectlCommand} delete pod -n ${ns} ${POD} --wait=true`,
    };
    const args = ['-B', '--no-transfer-progress', 'test', '-Dtest=InClusterCompatTest', ...Object.entries(properties).map(([k, v]) => `-D${k}=${v}`)];
    const maven = await promisify(execFile)('mvn', args, { cwd: COMPAT, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, timeout: 540_000 }).catch((error: { stdout?: string; stderr?: string; message: string }) => {
      throw new Error(`mvn ${args.join(' ')} failed:\n${error.stdout ?? ''}\n${error.stderr ?? error.message}`);
    });
    expect(maven.stdout).toMatch(/Tests run: 6, Failures: 0, Errors: 0, Skipped: 0/);
    expect(maven.stdout).toContain('BUILD SUCCESS');
  }, 600_000);
});
