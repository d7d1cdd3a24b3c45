import { copyFileSync, mkdirSync, mkdtempSync, renameSync, writeFileSync } from 'node:fs';
import { X509Certificate } from 'node:crypto';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { CoreV1Api, RbacAuthorizationV1Api, type KubeConfig } from '@kubernetes/client-node';
import { INJECTION_LABEL_KEY, INJECTION_LABEL_VALUE } from '@outrigger/admission';
import { freePort, kubeConfigFrom, startApp, startControlPlane, type ManagedProcess } from '@outrigger/control-plane';

// The README's first command: a local control plane with the three services on it, and one
// annotated pod to show what they do. Ctrl-C stops every process it started.
const NAMESPACE = 'outrigger-system';
const kubeconfigCopy = resolve('.outrigger/kubeconfig');
const step = (text: string) => console.log(`\n==> ${text}`);
const started: ManagedProcess[] = [];

step('starting etcd and kube-apiserver (the first run builds them from Go modules: minutes)');
const cp = await startControlPlane({ log: (line) => console.log(`    ${line}`) });
const kc = kubeConfigFrom(cp.kubeconfigPath);
const core = kc.makeApiClient(CoreV1Api);
const logs = mkdtempSync(join(tmpdir(), 'outrigger-demo-'));

const stopAll = async () => {
  for (const p of started.reverse()) await p.stop();
  await cp.stop();
};
let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    console.log('\nstopping Outrigger and the control plane');
    void stopAll().then(() => process.exit(0));
  });
}

try {
  await namespace(kc, NAMESPACE, {});
  const [injectorPort, certManagerPort, syncerPort] = [await freePort(), await freePort(), await freePort()];
  const common = { KUBECONFIG: cp.kubeconfigPath, POD_NAMESPACE: NAMESPACE };

  step('cert-manager: issuing the CA and the injector certificate, registering the webhook');
  started.push(
    await startApp('cert-manager', {
      env: { ...common, PORT: String(certManagerPort), REGISTER_WEBHOOK: 'true', WEBHOOK_URL_PORT: String(injectorPort), EXTRA_IP_ADDRESSES: '127.0.0.1' },
      readyUrl: `http://127.0.0.1:${certManagerPort}/healthz`,
      logFile: join(logs, 'cert-manager.log'),
    }),
  );
  const tls = await eventually(() => core.readNamespacedSecret({ name: 'outrigger-injector-tls', namespace: NAMESPACE }), 'the serving Secret');
  const certDir = join(logs, 'tls');
  mkdirSync(certDir);
  // Stands in for the kubelet's Secret volume (the fallback: the injector also watches the Secret).
  const syncFiles = async () => {
    const secret = await core.readNamespacedSecret({ name: 'outrigger-injector-tls', namespace: NAMESPACE });
    for (const key of ['tls.crt', 'tls.key', 'ca.crt']) {
      writeFileSync(join(certDir, `.${key}`), Buffer.from(secret.data?.[key] ?? '', 'base64'));
      renameSync(join(certDir, `.${key}`), join(certDir, key));
    }
  };
  await syncFiles();
  setInterval(() => void syncFiles().catch(() => undefined), 5_000).unref();

  step('injector: serving the webhook');
  started.push(
    await startApp('injector', {
      env: {
        ...common,
        PORT: String(injectorPort),
        TLS_CERT_FILE: join(certDir, 'tls.crt'),
        TLS_KEY_FILE: join(certDir, 'tls.key'),
        TLS_SECRET: 'outrigger-injector-tls',
        FILE_POLL_SECONDS: '2',
      },
      readyUrl: `https://127.0.0.1:${injectorPort}/readyz`,
      ca: Buffer.from(tls.data?.['ca.crt'] ?? '', 'base64').toString(),
      logFile: join(logs, 'injector.log'),
    }),
  );

  step('rbac-syncer: watching pods');
  started.push(
    await startApp('rbac-syncer', {
      env: { ...common, PORT: String(syncerPort), GRACE_SECONDS: '30' },
      readyUrl: `http://127.0.0.1:${syncerPort}/readyz`,
      logFile: join(logs, 'rbac-syncer.log'),
    }),
  );

  step('creating namespace "demo" (labelled for injection) and an annotated pod');
  await namespace(kc, 'demo', { [INJECTION_LABEL_KEY]: INJECTION_LABEL_VALUE });
  const pod = await eventually(
    () =>
      core.createNamespacedPod({
        namespace: 'demo',
        body: {
          metadata: {
            name: 'billing-worker',
            annotations: {
              'xxl-agent/enable': 'true',
              'xxl-agent/job-addr': 'http://xxl-job-admin.jobs:8080/xxl-job-admin',
              'xxl-agent/target-container': 'app',
              'xxl-agent/job-name': 'billing',
            },
          },
          spec: { containers: [{ name: 'app', image: 'registry.example/billing:1.0' }] },
        },
      }),
    'the webhook to accept the pod',
  );

  const agent = pod.spec?.containers.find((c) => c.name === 'xxl-agent');
  console.log(`\nPod demo/billing-worker was stored with containers: ${pod.spec?.containers.map((c) => c.name).join(', ')}`);
  if (agent) {
    console.log(`  agent image: ${agent.image}`);
    for (const e of agent.env ?? []) console.log(`  env ${e.name}=${e.value ?? `<${e.valueFrom?.fieldRef?.fieldPath}>`}`);
  }
  console.log(`  status annotation: ${pod.metadata?.annotations?.['xxl-agent/status']}`);

  const rbac = kc.makeApiClient(RbacAuthorizationV1Api);
  const binding = await eventually(async () => {
    const b = await rbac.readClusterRoleBinding({ name: 'xxl-agent-exec' });
    if (!b.subjects?.length) throw new Error('no subjects yet');
    return b;
  }, 'the ClusterRoleBinding');
  console.log(`\nClusterRoleBinding xxl-agent-exec → ClusterRole ${binding.roleRef.name}, subjects:`);
  for (const s of binding.subjects ?? []) console.log(`  ${s.kind} ${s.namespace}/${s.name}`);

  const leaf = new X509Certificate(Buffer.from(tls.data?.['tls.crt'] ?? '', 'base64'));
  console.log(`\nInjector certificate: ${leaf.subject.replace(/\n/g, ', ')}, expires ${leaf.validTo}`);

  mkdirSync(dirname(kubeconfigCopy), { recursive: true });
  copyFileSync(cp.kubeconfigPath, kubeconfigCopy);
  console.log(`
Outrigger is running against Kubernetes ${cp.version}. Try your own manifests:

  export KUBECONFIG=${kubeconfigCopy}
  alias kubectl=${cp.binDir}/kubectl
  kubectl label namespace default ${INJECTION_LABEL_KEY}=${INJECTION_LABEL_VALUE}
  kubectl get pod -n demo billing-worker -o yaml

Service logs: ${logs}. Press Ctrl-C to stop everything.`);
} catch (error) {
  console.error(`\ndemo failed: ${(error as Error).message}\nservice logs are in ${logs}`);
  await stopAll();
  process.exit(1);
}

async function namespace(kc: KubeConfig, name: string, labels: Record<string, string>): Promise<void> {
  const api = kc.makeApiClient(CoreV1Api);
  await api.createNamespace({ body: { metadata: { name, labels } } });
  await api.createNamespacedServiceAccount({ namespace: name, body: { metadata: { name: 'default' } } });
}

async function eventually<T>(attempt: () => Promise<T>, what: string, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await attempt();
    } catch (error) {
      if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}: ${(error as Error).message}`);
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}
