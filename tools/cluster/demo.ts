import { copyFileSync, mkdirSync } from 'node:fs';
import { randomBytes, X509Certificate } from 'node:crypto';
import { dirname, resolve } from 'node:path';
import { INJECTION_LABEL_KEY, INJECTION_LABEL_VALUE } from '@outrigger/admission';
import { adminStandInAddress, adminStandInCalls, adminStandInObjects, awaitRunLog, callExecutor, INSTALL_NAMESPACE, installOutrigger, startCluster, triggerShellJob, type Cluster } from '@outrigger/control-plane';
import { hangupLog, stopOnSignals } from './cluster-session.ts';

// The README's first command: a local single-node cluster, Outrigger installed from deploy/ as a user
// installs it, and one annotated Deployment whose XXL-JOB agent runs beside the business container:
// it registers with an admin, runs a job triggered as xxl-job-admin triggers it inside the business
// container, and reports the result. Ctrl-C stops everything and removes what it created.
const kubeconfigCopy = resolve('.outrigger/kubeconfig');
const step = (text: string) => console.log(`\n==> ${text}`);
const log = (line: string) => console.log(`    ${line}`);

/** The access token xxl-job-admin and its executors share; a team keeps it in Secret xxl-job-access-token. */
const ACCESS_TOKEN = randomBytes(16).toString('hex');
const TOKEN_SECRET = (namespace: string) => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'xxl-job-access-token', namespace }, stringData: { token: ACCESS_TOKEN } });

const ADMIN_OBJECTS = [{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'jobs' } }, TOKEN_SECRET('jobs'), ...adminStandInObjects('jobs')];

const DEMO_DEPLOYMENT = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'billing-worker', namespace: 'demo' },
  spec: {
    replicas: 1,
    selector: { matchLabels: { app: 'billing-worker' } },
    template: {
      metadata: {
        labels: { app: 'billing-worker' },
        annotations: {
          'xxl-agent/enable': 'true',
          'xxl-agent/job-addr': adminStandInAddress('jobs'),
          'xxl-agent/target-container': 'app',
          'xxl-agent/job-name': 'billing',
        },
      },
      spec: {
        terminationGracePeriodSeconds: 1,
        containers: [{ name: 'app', image: 'localhost/busybox:local', imagePullPolicy: 'Never', command: ['sh', '-c', 'echo billing worker up; exec sleep infinity'] }],
      },
    },
  },
};

/** The script of the demo's job: where it runs, and the business container's processes (its `sleep infinity`). */
const JOB_SCRIPT = 'echo "job running in container app of pod $(hostname)"; ps';

step('starting a local single-node cluster (the first run builds Kubernetes, containerd, CoreDNS and the images: many minutes)');
const cluster = await startCluster({ log }).catch((error: Error) => {
  console.error(`\ndemo failed: ${error.message}`);
  process.exit(1);
});
const stop = stopOnSignals(cluster, hangupLog(kubeconfigCopy));

try {
  step('installing Outrigger: kubectl apply -k deploy/base/crd, then -k deploy/overlays/local');
  await installOutrigger(cluster, log);

  step('an xxl-job-admin stand-in (busybox httpd with a CGI script that logs each call): Service xxl-job-admin in namespace "jobs"');
  cluster.kubectl(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: ADMIN_OBJECTS }));
  await cluster.kubectlAsync(['rollout', 'status', 'deployment/xxl-job-admin', '-n', 'jobs', '--timeout=180s']);

  step('namespace "demo" (labelled for injection), its Secret xxl-job-access-token, and an annotated Deployment');
  cluster.kubectl(['create', 'namespace', 'demo']);
  cluster.kubectl(['label', 'namespace', 'demo', `${INJECTION_LABEL_KEY}=${INJECTION_LABEL_VALUE}`]);
  cluster.kubectl(['apply', '-f', '-'], JSON.stringify(TOKEN_SECRET('demo')));
  cluster.kubectl(['apply', '-f', '-'], JSON.stringify(DEMO_DEPLOYMENT));
  await cluster.kubectlAsync(['rollout', 'status', 'deployment/billing-worker', '-n', 'demo', '--timeout=180s']);
  const pod = JSON.parse(cluster.kubectl(['get', 'pods', '-n', 'demo', '-l', 'app=billing-worker', '-o', 'jsonpath={.items[0]}'])) as DemoPod;
  console.log(`\nPod demo/${pod.metadata.name} is ${pod.status.phase} with containers:`);
  for (const c of pod.spec.containers) {
    const state = pod.status.containerStatuses?.find((s) => s.name === c.name);
    console.log(`  ${c.name.padEnd(10)} ${c.image.padEnd(42)} ready=${state?.ready ?? false}`);
  }
  const agent = pod.spec.containers.find((c) => c.name === 'xxl-agent');
  for (const e of agent?.env ?? []) console.log(`  agent env ${e.name}=${e.value ?? `<${e.valueFrom?.fieldRef?.fieldPath ?? `secret ${e.valueFrom?.secretKeyRef?.name}/${e.valueFrom?.secretKeyRef?.key}`}>`}`);

  step('the agent registers with the admin (/api/registry, every 30 s)');
  console.log(`  ${await adminLogLine(cluster, '/api/registry')}`);

  step("the rbac-syncer binds the pod's ServiceAccount to the agent's role, in this namespace's own binding");
  const binding = 'xxl-agent-exec.demo';
  const subjects = await boundSubjects(cluster, binding);
  console.log(`  ClusterRoleBinding ${binding} → ClusterRole xxl-agent-exec, subjects:\n${subjects.trim().replace(/^/gm, '    ')}`);

  // The address the agent registered (its pod IP, port and executor key), as its pod's owners read it.
  const address = cluster.kubectl(['exec', '-n', 'demo', pod.metadata.name, '-c', 'xxl-agent', '--', '/xxl-agent', 'address']).trim().replace(/\/$/, '');
  step(`a job triggered as xxl-job-admin triggers it: POST ${address}/run with the access token (GLUE_SHELL: ${JOB_SCRIPT})`);
  const run = await triggerShellJob(address, ACCESS_TOKEN, JOB_SCRIPT);
  console.log(`  its log (/log), written by the business container through the agent's exec (the RBAC the syncer bound):`);
  console.log((await awaitRunLog(address, ACCESS_TOKEN, run)).trimEnd().replace(/^/gm, '  | '));
  step('its result, reported to the admin (/api/callback)');
  console.log(`  ${await adminLogLine(cluster, '/api/callback')}`);
  const refused = await callExecutor(address, '/run', { jobId: 1, logId: 1, logDateTime: Date.now(), glueType: 'GLUE_SHELL', glueSource: 'id' }, 'not-the-token');
  console.log(`\nThe same /run with another token: code ${refused.code}, "${refused.msg ?? ''}" (nothing runs).`);
  const unregistered = await callExecutor(`http://${pod.status.podIP}:9999`, '/run', { jobId: 1, logId: 2, logDateTime: Date.now(), glueType: 'GLUE_SHELL', glueSource: 'id' }, ACCESS_TOKEN);
  console.log(`With the token, at the pod IP without the executor key (as any tenant holding xxl-job-admin's one token could try): code ${unregistered.code}, "${unregistered.msg ?? ''}" (nothing runs).`);

  const leaf = new X509Certificate(Buffer.from(cluster.kubectl(['get', 'secret', 'outrigger-injector-tls', '-n', INSTALL_NAMESPACE, '-o', 'jsonpath={.data.tls\\.crt}']), 'base64'));
  console.log(`\nInjector certificate: ${leaf.subject.replace(/\n/g, ', ')}, expires ${leaf.validTo}`);

  mkdirSync(dirname(kubeconfigCopy), { recursive: true });
  copyFileSync(cluster.kubeconfigPath, kubeconfigCopy);
  console.log(`
Outrigger is running on Kubernetes ${cluster.version}. Try your own manifests:

  export KUBECONFIG=${kubeconfigCopy}
  alias kubectl=${cluster.binDir}/kubectl
  kubectl get pods -A
  kubectl logs -n jobs deploy/xxl-job-admin        # what the admin stand-in received
  curl -s -H 'XXL-JOB-ACCESS-TOKEN: ${ACCESS_TOKEN}' -d '{"jobId":2,"logId":7,"logDateTime":'$(date +%s000)',"glueType":"GLUE_SHELL","glueSource":"date; hostname"}' ${address}/run

Images on the node: ${cluster.images.map((i) => i.ref).join(', ')}.
Component logs: ${cluster.dir}/*.log. Press Ctrl-C to stop everything.`);
} catch (error) {
  console.error(`\ndemo failed: ${(error as Error).message}\ncomponent logs: ${cluster.dir}/*.log`);
  await stop(1);
}

interface DemoPod {
  metadata: { name: string };
  spec: { containers: { name: string; image: string; env?: { name: string; value?: string; valueFrom?: { fieldRef?: { fieldPath: string }; secretKeyRef?: { name: string; key: string } } }[] }[] };
  status: { phase: string; podIP: string; containerStatuses?: { name: string; ready: boolean }[] };
}

/** The subjects of the syncer's binding once it holds the demo's ServiceAccount, waiting up to two minutes. */
async function boundSubjects(c: Cluster, binding: string): Promise<string> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    try {
      const subjects = c.kubectl(['get', 'clusterrolebinding', binding, '-o', 'jsonpath={range .subjects[*]}{.kind} {.namespace}/{.name}{"\\n"}{end}']);
      if (subjects.includes('demo/default')) return subjects;
    } catch {
      // not created yet
    }
    if (Date.now() > deadline) throw new Error(`the rbac-syncer did not bind demo/default in ${binding}`);
    await new Promise((r) => setTimeout(r, 1_000));
  }
}

/** The first line of the admin stand-in's log about `path`, waiting up to two minutes for it. */
async function adminLogLine(c: Cluster, path: string): Promise<string> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    const [line] = adminStandInCalls(c.kubectl(['logs', '-n', 'jobs', 'deployment/xxl-job-admin']), path);
    if (line !== undefined) return line;
    if (Date.now() > deadline) throw new Error(`the admin stand-in received no ${path} call`);
    await new Promise((r) => setTimeout(r, 1_000));
  }
}
