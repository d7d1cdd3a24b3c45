import { copyFileSync, mkdirSync } from 'node:fs';
import { X509Certificate } from 'node:crypto';
import { dirname, resolve } from 'node:path';
import { INJECTION_LABEL_KEY, INJECTION_LABEL_VALUE } from '@outrigger/admission';
import { INSTALL_NAMESPACE, installOutrigger, startCluster, type Cluster } from '@outrigger/control-plane';
import { stopOnSignals } from './cluster-session.ts';

// The README's first command: a local single-node cluster, Outrigger installed from deploy/ as a user
// installs it, and one annotated Deployment whose agent runs beside the business container and execs
// into it. Ctrl-C stops everything and removes what it created.
const kubeconfigCopy = resolve('.outrigger/kubeconfig');
const step = (text: string) => console.log(`\n==> ${text}`);
const log = (line: string) => console.log(`    ${line}`);

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
          'xxl-agent/job-addr': 'http://xxl-job-admin.jobs:8080/xxl-job-admin',
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

step('starting a local single-node cluster (the first run builds Kubernetes, containerd, CoreDNS and the images: many minutes)');
const cluster = await startCluster({ log }).catch((error: Error) => {
  console.error(`\ndemo failed: ${error.message}`);
  process.exit(1);
});
const stop = stopOnSignals(cluster);

try {
  step('installing Outrigger: kubectl apply -k deploy/base/crd, then -k deploy/overlays/local');
  await installOutrigger(cluster, log);

  step('namespace "demo" (labelled for injection) and an annotated Deployment');
  cluster.kubectl(['create', 'namespace', 'demo']);
  cluster.kubectl(['label', 'namespace', 'demo', `${INJECTION_LABEL_KEY}=${INJECTION_LABEL_VALUE}`]);
  cluster.kubectl(['apply', '-f', '-'], JSON.stringify(DEMO_DEPLOYMENT));
  await cluster.kubectlAsync(['rollout', 'status', 'deployment/billing-worker', '-n', 'demo', '--timeout=180s']);
  const pod = JSON.parse(cluster.kubectl(['get', 'pods', '-n', 'demo', '-l', 'app=billing-worker', '-o', 'jsonpath={.items[0]}'])) as DemoPod;
  console.log(`\nPod demo/${pod.metadata.name} is ${pod.status.phase} with containers:`);
  for (const c of pod.spec.containers) {
    const state = pod.status.containerStatuses?.find((s) => s.name === c.name);
    console.log(`  ${c.name.padEnd(10)} ${c.image.padEnd(42)} ready=${state?.ready ?? false}`);
  }
  const agent = pod.spec.containers.find((c) => c.name === 'xxl-agent');
  for (const e of agent?.env ?? []) console.log(`  agent env ${e.name}=${e.value ?? `<${e.valueFrom?.fieldRef?.fieldPath}>`}`);

  step("the agent's exec into its target container, through the API with the RBAC the syncer bound");
  const result = await agentExec(cluster, pod.metadata.name);
  console.log(`  ok=${result.ok} container=${result.container}\n  stdout: ${result.stdout.trim().split('\n').join(' | ')}`);
  const binding = 'xxl-agent-exec.demo';
  const subjects = cluster.kubectl(['get', 'clusterrolebinding', binding, '-o', 'jsonpath={range .subjects[*]}{.kind} {.namespace}/{.name}{"\\n"}{end}']);
  console.log(`\nClusterRoleBinding ${binding} (this namespace's own) → ClusterRole xxl-agent-exec, subjects:\n${subjects.trim().replace(/^/gm, '  ')}`);

  const leaf = new X509Certificate(Buffer.from(cluster.kubectl(['get', 'secret', 'outrigger-injector-tls', '-n', INSTALL_NAMESPACE, '-o', 'jsonpath={.data.tls\\.crt}']), 'base64'));
  console.log(`\nInjector certificate: ${leaf.subject.replace(/\n/g, ', ')}, expires ${leaf.validTo}`);

  mkdirSync(dirname(kubeconfigCopy), { recursive: true });
  copyFileSync(cluster.kubeconfigPath, kubeconfigCopy);
  console.log(`
Outrigger is running on Kubernetes ${cluster.version}. Try your own manifests:

  export KUBECONFIG=${kubeconfigCopy}
  alias kubectl=${cluster.binDir}/kubectl
  kubectl get pods -A
  kubectl get --raw /api/v1/namespaces/demo/pods/${pod.metadata.name}:9999/proxy/exec   # the agent execs again

Images on the node: ${cluster.images.map((i) => i.ref).join(', ')}.
Component logs: ${cluster.dir}/*.log. Press Ctrl-C to stop everything.`);
} catch (error) {
  console.error(`\ndemo failed: ${(error as Error).message}\ncomponent logs: ${cluster.dir}/*.log`);
  await stop(1);
}

interface DemoPod {
  metadata: { name: string };
  spec: { containers: { name: string; image: string; env?: { name: string; value?: string; valueFrom?: { fieldRef?: { fieldPath: string } } }[] }[] };
  status: { phase: string; containerStatuses?: { name: string; ready: boolean }[] };
}

interface AgentResult {
  ok: boolean;
  stdout: string;
  error: string;
  container: string;
}

async function agentExec(c: Cluster, pod: string): Promise<AgentResult> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    let last: AgentResult | string;
    try {
      last = JSON.parse(c.kubectl(['get', '--raw', `/api/v1/namespaces/demo/pods/${pod}:9999/proxy/last`])) as AgentResult;
      if (last.ok) return last;
    } catch (error) {
      last = (error as Error).message;
    }
    if (Date.now() > deadline) throw new Error(`the agent did not exec successfully: ${typeof last === 'string' ? last : last.error}`);
    await new Promise((r) => setTimeout(r, 1_000));
  }
}
