import { request } from 'node:https';
import { request as httpRequest } from 'node:http';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateKeyPairSync } from 'node:crypto';
import { issueCertificate, type Issued } from '@outrigger/pki';
import { stringify } from 'yaml';
import { resolveBinaries } from './binaries.js';
import { ManagedProcess } from './managed-process.js';
import { freePort } from './ports.js';

export interface ControlPlaneOptions {
  /** Extra kube-apiserver flags, e.g. `--admission-control-config-file=…`. */
  readonly apiServerArgs?: readonly string[];
  /** Extra etcd flags, e.g. `--quota-backend-bytes=…` for large benches. */
  readonly etcdArgs?: readonly string[];
  /** Progress lines (binary build, readiness); stderr by default. */
  readonly log?: (line: string) => void;
  /** Keep the working directory (certificates, logs, etcd data) after stop. */
  readonly keepDir?: boolean;
  /**
   * etcd's data directory, kept after stop: a later control plane given the same directory starts
   * with the same objects (new certificates; a bench seeds 150 000 pods once).
   */
  readonly etcdDataDir?: string;
  /** How long etcd and the API server may take to be ready (default 120 s); a large seeded etcd fills the watch cache for minutes. */
  readonly readyTimeoutMs?: number;
  /** Serve a cluster with nodes (see startCluster) instead of a bare API server on loopback. */
  readonly forNodes?: NodeFacingOptions;
  /** Another kube-apiserver binary than the pinned build's (the oldest supported: floorApiServer()); etcd and kubectl stay the pinned ones. */
  readonly kubeApiServer?: string;
}

/** What an API server needs to serve a node: its address, the node authorizer, and the kubelet's CA and client certificate. */
export interface NodeFacingOptions {
  /** Working directory (created if missing, never removed here: the cluster owns it). */
  readonly dir: string;
  /** The CA for every certificate in the cluster; the caller issues the components' certificates with it. */
  readonly ca: Issued;
  readonly address: string;
  readonly port: number;
  readonly serviceCidr: string;
  /** The `kubernetes` Service's ClusterIP, a name in the serving certificate. */
  readonly serviceAddress: string;
  /** The API server's client certificate for kubelets (exec, logs, port-forward). */
  readonly kubeletClient: Issued;
}

export interface ControlPlane {
  /** kube-apiserver's gitVersion, e.g. v1.36.3. */
  readonly version: string;
  /** https://127.0.0.1:<port> */
  readonly server: string;
  /** Admin (system:masters) kubeconfig. */
  readonly kubeconfigPath: string;
  /** Certificates, logs and etcd data live here. */
  readonly dir: string;
  /** Holds kube-apiserver, etcd and kubectl. */
  readonly binDir: string;
  /** The cluster CA: signs the serving certificate and client certificates. */
  readonly ca: Issued;
  /**
   * The CA of the client certificate kube-apiserver presents to every webhook that asks for one
   * (its admission configuration): the injector's CLIENT_CA_FILE for mutual TLS.
   */
  readonly webhookClientCaFile: string;
  /** Stops kube-apiserver only (etcd keeps the data); for disconnect tests. */
  stopApiServer(): Promise<void>;
  /** Starts kube-apiserver again on the same port with the same flags and waits for /readyz. */
  startApiServer(): Promise<void>;
  stop(): Promise<void>;
}

const YEAR_MS = 365 * 86_400_000;

/** Starts etcd and kube-apiserver on free loopback ports with fresh certificates and RBAC. */
export async function startControlPlane(options: ControlPlaneOptions = {}): Promise<ControlPlane> {
  const log = options.log ?? ((line: string) => process.stderr.write(`[control-plane] ${line}\n`));
  const binDir = await resolveBinaries(log);
  const nodes = options.forNodes;
  const dir = nodes ? join(nodes.dir, 'control-plane') : mkdtempSync(join(tmpdir(), 'outrigger-cp-'));
  mkdirSync(dir, { recursive: true });
  const [etcdClientPort, etcdPeerPort] = [await freePort(), await freePort()];
  const apiPort = nodes?.port ?? (await freePort());
  const address = nodes?.address ?? '127.0.0.1';
  const server = `https://${address}:${apiPort}`;
  const files = writeCredentials(dir, nodes);

  const etcdUrl = `http://127.0.0.1:${etcdClientPort}`;
  const peerUrl = `http://127.0.0.1:${etcdPeerPort}`;
  const etcd = new ManagedProcess('etcd', join(binDir, 'etcd'), [
    '--name=default',
    `--data-dir=${options.etcdDataDir ?? join(dir, 'etcd')}`,
    `--listen-client-urls=${etcdUrl}`,
    `--advertise-client-urls=${etcdUrl}`,
    `--listen-peer-urls=${peerUrl}`,
    `--initial-advertise-peer-urls=${peerUrl}`,
    `--initial-cluster=default=${peerUrl}`,
    '--unsafe-no-fsync', // test data: durability is not worth the latency
    '--log-level=warn',
    ...(options.etcdArgs ?? []),
  ], join(dir, 'etcd.log'));

  const apiArgs = [
    `--etcd-servers=${etcdUrl}`,
    `--bind-address=${address}`,
    `--advertise-address=${address}`,
    `--secure-port=${apiPort}`,
    `--tls-cert-file=${files.servingCert}`,
    `--tls-private-key-file=${files.servingKey}`,
    `--client-ca-file=${files.caCert}`,
    '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
    `--service-account-key-file=${files.saPublic}`,
    `--service-account-signing-key-file=${files.saPrivate}`,
    `--service-cluster-ip-range=${nodes?.serviceCidr ?? '10.0.0.0/24'}`,
    ...(nodes
      ? [
          '--authorization-mode=Node,RBAC',
          '--enable-admission-plugins=NodeRestriction',
          `--kubelet-client-certificate=${files.kubeletClientCert}`,
          `--kubelet-client-key=${files.kubeletClientKey}`,
          `--kubelet-certificate-authority=${files.caCert}`,
          // Never a name: resolving the node's name would ask the host's resolver, outside the cluster.
          '--kubelet-preferred-address-types=InternalIP',
          // Webhook Services are called at their endpoints' addresses: no wait for kube-proxy's rules.
          '--enable-aggregator-routing=true',
        ]
      : [
          '--authorization-mode=RBAC',
          // No controller-manager or endpoints here: the apiserver must not wait for its own Service endpoints.
          '--endpoint-reconciler-type=none',
        ]),
    '--allow-privileged=true',
    '--profiling=false',
    `--admission-control-config-file=${files.admissionConfig}`,
    ...(options.apiServerArgs ?? []),
  ];
  let apiServer: ManagedProcess | undefined;
  const stopAll = async () => {
    await apiServer?.stop();
    await etcd.stop();
  };

  try {
    await waitFor('etcd', () => get(`${etcdUrl}/health`), etcd, options.readyTimeoutMs);
    const startApiServer = async () => {
      apiServer = new ManagedProcess('kube-apiserver', options.kubeApiServer ?? join(binDir, 'kube-apiserver'), apiArgs, join(dir, 'kube-apiserver.log'));
      await waitFor('kube-apiserver', () => get(`${server}/readyz`, files.admin, files.ca.cert), apiServer, options.readyTimeoutMs);
    };
    log(`starting etcd and kube-apiserver in ${dir}`);
    await startApiServer();
    const version = JSON.parse(await get(`${server}/version`, files.admin, files.ca.cert)).gitVersion as string;
    const kubeconfigPath = join(dir, 'kubeconfig');
    writeFileSync(kubeconfigPath, kubeconfigYaml(server, files.ca.cert, files.admin), { mode: 0o600 });
    log(`kube-apiserver ${version} ready at ${server} (etcd at ${etcdUrl}); kubeconfig: ${kubeconfigPath}`);
    return {
      version,
      server,
      kubeconfigPath,
      dir,
      binDir,
      ca: files.ca,
      webhookClientCaFile: files.webhookClientCa,
      stopApiServer: async () => apiServer?.stop(),
      startApiServer,
      stop: async () => {
        await stopAll();
        if (!options.keepDir && !nodes) rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await stopAll();
    throw new Error(`${(error as Error).message} (logs in ${dir})`, { cause: error });
  }
}

function writeCredentials(dir: string, nodes?: NodeFacingOptions) {
  const ca = nodes?.ca ?? issueCertificate({ commonName: 'outrigger-local-ca', usage: 'ca', lifetimeMs: YEAR_MS });
  const serving = issueCertificate({
    commonName: 'kube-apiserver',
    usage: 'server',
    issuer: ca,
    lifetimeMs: YEAR_MS,
    dnsNames: ['localhost', 'kubernetes', 'kubernetes.default', 'kubernetes.default.svc', 'kubernetes.default.svc.cluster.local'],
    ipAddresses: nodes ? ['127.0.0.1', nodes.address, nodes.serviceAddress] : ['127.0.0.1', '10.0.0.1'],
  });
  const admin = issueCertificate({ commonName: 'admin', organizations: ['system:masters'], usage: 'client', issuer: ca, lifetimeMs: YEAR_MS });
  const sa = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const webhookClientCa = issueCertificate({ commonName: 'outrigger-local-webhook-client-ca', usage: 'ca', lifetimeMs: YEAR_MS });
  const webhookClient = issueCertificate({ commonName: 'kube-apiserver-webhook-client', usage: 'client', issuer: webhookClientCa, lifetimeMs: YEAR_MS });
  const path = (name: string, content: string) => {
    writeFileSync(join(dir, name), content, { mode: 0o600 });
    return join(dir, name);
  };
  return {
    ca,
    admin,
    caCert: path('ca.crt', ca.cert),
    // Tests mint client certificates for other users (RBAC checks) with the CA key.
    caKey: path('ca.key', ca.key),
    servingCert: path('apiserver.crt', serving.cert),
    servingKey: path('apiserver.key', serving.key),
    saPublic: path('sa.pub', sa.publicKey.export({ type: 'spki', format: 'pem' }).toString()),
    saPrivate: path('sa.key', sa.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString()),
    webhookClientCa: path('webhook-client-ca.crt', webhookClientCa.cert),
    kubeletClientCert: nodes ? path('kubelet-client.crt', nodes.kubeletClient.cert) : '',
    kubeletClientKey: nodes ? path('kubelet-client.key', nodes.kubeletClient.key) : '',
    admissionConfig: path('admission-config.yaml', admissionConfigYaml(path('webhook-client.kubeconfig', webhookClientKubeconfigYaml(webhookClient)))),
  };
}

/**
 * kube-apiserver's admission configuration: the (validating and mutating) webhook plugins present
 * `webhookKubeconfig`'s credentials. This is how a cluster admin enables webhook mutual TLS.
 */
function admissionConfigYaml(webhookKubeconfig: string): string {
  const webhookPlugin = (name: string) => ({
    name,
    configuration: { apiVersion: 'apiserver.config.k8s.io/v1', kind: 'WebhookAdmissionConfiguration', kubeConfigFile: webhookKubeconfig },
  });
  return stringify({
    apiVersion: 'apiserver.config.k8s.io/v1',
    kind: 'AdmissionConfiguration',
    plugins: [webhookPlugin('MutatingAdmissionWebhook'), webhookPlugin('ValidatingAdmissionWebhook')],
  });
}

/** Credentials by webhook host; `*` matches every webhook (sent only to those that ask for a certificate). */
function webhookClientKubeconfigYaml(client: Issued): string {
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    users: [{ name: '*', user: { 'client-certificate-data': b64(client.cert), 'client-key-data': b64(client.key) } }],
  });
}

/** A kubeconfig for `server` authenticating with the client certificate `user`. */
export function kubeconfigYaml(server: string, caCert: string, user: Issued, userName = 'admin'): string {
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'outrigger-local', cluster: { server, 'certificate-authority-data': b64(caCert) } }],
    users: [{ name: userName, user: { 'client-certificate-data': b64(user.cert), 'client-key-data': b64(user.key) } }],
    contexts: [{ name: 'outrigger-local', context: { cluster: 'outrigger-local', user: userName } }],
    'current-context': 'outrigger-local',
  });
}

async function waitFor(name: string, probe: () => Promise<unknown>, process: ManagedProcess, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    if (!process.running) throw new Error(`${name} exited during startup; the end of ${process.logFile}:\n${process.logTail()}`);
    try {
      await probe();
      return;
    } catch (error) {
      lastError = error;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  throw new Error(`${name} not ready after ${timeoutMs / 1000}s: ${(lastError as Error)?.message}; the end of ${process.logFile}:\n${process.logTail()}`);
}

/** GET returning the body of a 200, rejecting anything else; with a client certificate for https. */
function get(url: string, client?: Issued, ca?: string): Promise<string> {
  return new Promise((done, fail) => {
    const onResponse = (res: import('node:http').IncomingMessage) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => (res.statusCode === 200 ? done(body) : fail(new Error(`${url}: HTTP ${res.statusCode} ${body.slice(0, 200)}`))));
    };
    const req = url.startsWith('https:')
      ? request(url, { cert: client?.cert, key: client?.key, ca, timeout: 5_000 }, onResponse)
      : httpRequest(url, { timeout: 5_000 }, onResponse);
    req.on('timeout', () => req.destroy(new Error(`${url}: timeout`)));
    req.on('error', fail);
    req.end();
  });
}
