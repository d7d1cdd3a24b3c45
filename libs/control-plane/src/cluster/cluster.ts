import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { issueCertificate, type Issued } from '@outrigger/pki';
import { CONTROL_PLANE_BINARIES, NODE_BINARIES, resolveBinaries, resolveToolDir, runBuildScript, runScript } from '../binaries.js';
import { kubeconfigYaml, startControlPlane, type ControlPlane } from '../control-plane.js';
import { ManagedProcess, processAlive } from '../managed-process.js';
import { freePort } from '../ports.js';
import { CLUSTER_NETWORK as NET } from './cluster-network.js';
import { host, hostAsync, tryHost } from './host-command.js';
import { clusterReapers, pidFileOwner, startReaper } from './cluster-reaper.js';
import { cgroupDirs, clusterProcesses, createCgroupRoot, killClusterProcesses, mountsUnder, removeCgroups, unmountUnder, vethInterfaces } from './host-cleanup.js';
import { hostNetworkLeftovers, policyQueueBound, setUpHostNetwork, tearDownHostNetwork } from './host-network.js';
import { localRegistry, REGISTRY_ENV, registryConfig, writeRegistryHosts, type LocalRegistry } from './local-registry.js';
import { cniConfig, containerdConfig, corefile, kubeletConfig, kubeProxyConfig } from './node-config.js';

export interface ClusterOptions {
  /** Progress lines; stderr by default. */
  readonly log?: (line: string) => void;
  /** Where the cluster keeps everything (default OUTRIGGER_CLUSTER_DIR or /var/lib/outrigger-cluster). */
  readonly dir?: string;
  /** Image archives to load instead of building the repository's (tools/images/build.sh). */
  readonly images?: readonly LocalImage[];
}

export interface LocalImage {
  readonly ref: string;
  readonly archive: string;
}

export interface Cluster {
  readonly version: string;
  /** https://10.245.0.1:6443 */
  readonly server: string;
  /** Admin (system:masters) kubeconfig. */
  readonly kubeconfigPath: string;
  readonly dir: string;
  /** Holds kubectl and the other Kubernetes binaries. */
  readonly binDir: string;
  readonly ca: Issued;
  readonly images: readonly LocalImage[];
  /** The node's registries (Outrigger's images are pushed there by the e2e setup; see local-registry.ts). */
  readonly registry: LocalRegistry;
  /** `ctr` for the node's containerd, images namespace k8s.io: e.g. `[...ctr, 'images', 'tag', from, to]` gives the node another tag of an image it has. */
  readonly ctr: readonly string[];
  /** Runs kubectl against the cluster; throws with kubectl's stderr on failure. */
  kubectl(args: readonly string[], input?: string): string;
  /** kubectl without blocking the event loop (long waits, so signals are still handled). */
  kubectlAsync(args: readonly string[]): Promise<string>;
  /**
   * Stops every process and removes everything the cluster created; throws if anything is left, or
   * if a component had exited while the cluster ran. `signal`: the signal that ends the cluster's
   * owner when it reached the components too (a terminal's Ctrl-C or hangup goes to the whole
   * process group): their exits are then its doing, not news.
   */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

const YEAR_MS = 365 * 86_400_000;
const DEFAULT_DIR = '/var/lib/outrigger-cluster';
/** Paths outside the cluster's directory that containerd, CNI or kubelet create when missing. */
const HOST_PATHS = ['/run/containerd', '/run/nri', '/var/lib/cni', '/var/log/containers', '/etc/cni'];

const stderrLog = (line: string): void => void process.stderr.write(`[cluster] ${line}\n`);

/** What a cluster runs: the directories of its binaries, and the images it loads. */
export interface ClusterParts {
  readonly binDir: string;
  readonly containerdDir: string;
  readonly corednsDir: string;
  readonly networkPoliciesDir: string;
  readonly registryDir: string;
  readonly htpasswdDir: string;
  readonly images: readonly LocalImage[];
}

/**
 * Builds what a cluster runs where it is missing (binaries from Go modules, once, cached outside
 * the repository; the repository's images, reused while their inputs are unchanged), so that a
 * start measured by a deadline does not include a first build.
 */
export async function prepareCluster(options: Pick<ClusterOptions, 'log' | 'images'> = {}): Promise<ClusterParts> {
  const log = options.log ?? stderrLog;
  log('resolving binaries (the first run builds them from Go modules: many minutes)');
  const binDir = await resolveBinaries(log, [...CONTROL_PLANE_BINARIES, ...NODE_BINARIES]);
  const containerdDir = await resolveToolDir('OUTRIGGER_CONTAINERD_BIN', 'tools/cluster/containerd/build.sh', ['containerd', 'containerd-shim-runc-v2', 'ctr'], log);
  const corednsDir = await resolveToolDir('OUTRIGGER_COREDNS_BIN', 'tools/cluster/coredns/build.sh', ['coredns'], log);
  const networkPoliciesDir = await resolveToolDir('OUTRIGGER_NETWORK_POLICIES_BIN', 'tools/cluster/network-policies/build.sh', ['network-policies'], log);
  const registryDir = await resolveToolDir('OUTRIGGER_REGISTRY_BIN', 'tools/registry/build.sh', ['registry'], log);
  const htpasswdDir = await runBuildScript('tools/registry/build.sh', ['htpasswd'], log);
  if (!options.images) log('building images (reused when their inputs are unchanged)');
  const images = options.images ?? parseImages(await runScript('tools/images/build.sh', [], log));
  return { binDir, containerdDir, corednsDir, networkPoliciesDir, registryDir, htpasswdDir, images };
}

export function clusterDir(options: ClusterOptions = {}): string {
  return options.dir ?? process.env.OUTRIGGER_CLUSTER_DIR ?? DEFAULT_DIR;
}

/**
 * A single-node Kubernetes cluster on this host: etcd, kube-apiserver, controller-manager,
 * scheduler, containerd, kubelet, kube-proxy, CoreDNS and a NetworkPolicy enforcer, with the repository's images loaded.
 * Needs root. Leftovers of an earlier run that died are removed first.
 */
export async function startCluster(options: ClusterOptions = {}): Promise<Cluster> {
  const log = options.log ?? stderrLog;
  const dir = clusterDir(options);
  checkHost(dir);

  const { binDir, containerdDir, corednsDir, networkPoliciesDir, registryDir, htpasswdDir, images } = await prepareCluster({ log, ...(options.images ? { images: options.images } : {}) });

  await claim(dir, binDir, log);
  startReaper({ owner: process.pid, dir, binDir });
  mkdirSync(dir, { recursive: true });
  const started: ManagedProcess[] = [];
  let controlPlane: ControlPlane | undefined;
  const stop = async (signal?: NodeJS.Signals) => {
    // A component that died while the cluster ran makes every later result suspect: say so, with its last words.
    const died = signal ? [] : started.filter((p) => !p.running).map((p) => `${p.name} exited while the cluster ran:\n${p.logTail()}`);
    for (const p of started.reverse()) p.killNow();
    await controlPlane?.stop();
    await tearDownCluster(dir, binDir);
    const left = clusterLeftovers(dir);
    if (left.length > 0) throw new Error(`the cluster left things behind: ${left.join('; ')}`);
    if (died.length > 0) throw new Error(died.join('\n'));
  };

  try {
    writeFileSync(join(dir, 'absent-host-paths.json'), JSON.stringify(HOST_PATHS.filter((p) => !existsSync(p))));
    setUpHostNetwork(join(dir, 'host-network.json'));
    createCgroupRoot();
    const certs = issueClusterCertificates();
    log('starting etcd and kube-apiserver');
    controlPlane = await startControlPlane({
      log,
      forNodes: {
        dir,
        ca: certs.ca,
        address: NET.hostAddress,
        port: NET.apiServerPort,
        serviceCidr: NET.serviceCidr,
        serviceAddress: NET.apiServiceAddress,
        kubeletClient: certs.kubeletClient,
      },
    });
    const cp = controlPlane;
    const file = (name: string, content: string) => {
      const path = join(dir, name);
      writeFileSync(path, content, { mode: 0o600 });
      return path;
    };
    const kubeconfig = (name: string, user: Issued, userName: string) => file(`${name}.kubeconfig`, kubeconfigYaml(cp.server, certs.ca.cert, user, userName));
    const caFile = join(cp.dir, 'ca.crt');
    const run = (name: string, command: string, args: readonly string[], env: NodeJS.ProcessEnv = process.env) => {
      const p = new ManagedProcess(name, command, args, join(dir, `${name}.log`), env);
      started.push(p);
      return p;
    };

    log('starting the registries');
    const registry = localRegistry(dir);
    await startRegistries(registry, certs.ca, { dir, htpasswdDir, registryBin: join(registryDir, 'registry'), run, until });

    log('starting containerd and loading the images');
    const registryHostsDir = join(dir, 'containerd', 'certs.d');
    writeRegistryHosts(registryHostsDir, registry);
    const containerdSocket = join(dir, 'containerd', 'containerd.sock');
    const cniConfDir = join(dir, 'cni');
    mkdirSync(cniConfDir, { recursive: true });
    file('cni/10-outrigger.conflist', cniConfig(dir));
    const containerdEnv = { ...process.env, PATH: `${containerdDir}:${process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin'}` };
    const containerd = run('containerd', join(containerdDir, 'containerd'), ['--config', file('containerd.toml', containerdConfig({ dir, containerdSocket, cniConfDir, registryHostsDir }, which('runc')))], containerdEnv);
    const ctr = (args: readonly string[]) => host(join(containerdDir, 'ctr'), ['--address', containerdSocket, '--namespace', 'k8s.io', ...args]);
    await until('containerd', containerd, () => ctr(['version']));
    for (const image of images) ctr(['images', 'import', '--local', image.archive]);

    log('starting the controller-manager, scheduler, kubelet, kube-proxy, CoreDNS and the NetworkPolicy enforcer');
    const controllerManager = run('kube-controller-manager', join(binDir, 'kube-controller-manager'), [
      `--kubeconfig=${kubeconfig('controller-manager', certs.controllerManager, 'system:kube-controller-manager')}`,
      '--bind-address=127.0.0.1',
      `--secure-port=${await freePort()}`,
      '--leader-elect=false',
      '--use-service-account-credentials=true',
      `--service-account-private-key-file=${join(cp.dir, 'sa.key')}`,
      `--root-ca-file=${caFile}`,
      '--allocate-node-cidrs=false',
      '--authentication-skip-lookup=true',
    ]);
    run('kube-scheduler', join(binDir, 'kube-scheduler'), [
      `--kubeconfig=${kubeconfig('scheduler', certs.scheduler, 'system:kube-scheduler')}`,
      '--bind-address=127.0.0.1',
      `--secure-port=${await freePort()}`,
      '--leader-elect=false',
      '--authentication-skip-lookup=true',
    ]);
    const kubeletHealthz = await freePort();
    const kubelet = run('kubelet', join(binDir, 'kubelet'), [
      `--config=${file('kubelet.yaml', kubeletConfig({
        dir,
        caFile,
        servingCert: file('kubelet.crt', certs.kubeletServing.cert),
        servingKey: file('kubelet.key', certs.kubeletServing.key),
        resolvConf: file('resolv.conf', `nameserver ${NET.hostAddress}\n`),
        containerdSocket,
        healthzPort: kubeletHealthz,
      }))}`,
      `--kubeconfig=${kubeconfig('kubelet', certs.node, `system:node:${NET.nodeName}`)}`,
      `--root-dir=${join(dir, 'kubelet')}`,
      `--cert-dir=${join(dir, 'kubelet', 'pki')}`,
      `--hostname-override=${NET.nodeName}`,
      `--node-ip=${NET.hostAddress}`,
    ], containerdEnv);
    run('kube-proxy', join(binDir, 'kube-proxy'), [
      `--config=${file('kube-proxy.yaml', kubeProxyConfig({ kubeconfig: kubeconfig('kube-proxy', certs.proxy, 'system:kube-proxy'), healthzPort: await freePort(), metricsPort: await freePort() }))}`,
    ]);
    const [dnsHealth, dnsReady] = [await freePort(), await freePort()];
    const coredns = run('coredns', join(corednsDir, 'coredns'), ['-conf', file('Corefile', corefile(cp.kubeconfigPath, dnsHealth, dnsReady))]);
    // Before any pod starts: a NetworkPolicy the install applies is enforced from its first packet.
    const networkPolicies = run('network-policies', join(networkPoliciesDir, 'network-policies'), ['--kubeconfig', cp.kubeconfigPath, '--node-name', NET.nodeName, '--nfqueue-id', String(NET.policyQueue)]);

    const kubectlArgs = (args: readonly string[]) => ['--kubeconfig', cp.kubeconfigPath, ...args];
    const kubectl = (args: readonly string[], input?: string) => host(join(binDir, 'kubectl'), kubectlArgs(args), input);
    const kubectlAsync = (args: readonly string[]) => hostAsync(join(binDir, 'kubectl'), kubectlArgs(args));
    await until('kubelet', kubelet, () => {
      const ready = kubectl(['get', 'node', NET.nodeName, '-o', 'jsonpath={.status.conditions[?(@.type=="Ready")].status}']);
      if (ready !== 'True') throw new Error(`node ${NET.nodeName} Ready=${ready || 'unknown'}`);
    });
    await until('kube-controller-manager', controllerManager, () => kubectl(['get', 'serviceaccount', 'default', '-n', 'default']));
    await until('coredns', coredns, () => host('curl', ['-sf', `http://127.0.0.1:${dnsReady}/ready`]));
    await until('network-policies', networkPolicies, () => {
      if (!policyQueueBound()) throw new Error(`nfqueue ${NET.policyQueue} has no listener yet`);
    });
    log(`node ${NET.nodeName} is Ready; Kubernetes ${cp.version} at ${cp.server}`);
    const ctrCommand = [join(containerdDir, 'ctr'), '--address', containerdSocket, '--namespace', 'k8s.io'];
    return { version: cp.version, server: cp.server, kubeconfigPath: cp.kubeconfigPath, dir, binDir, ca: certs.ca, images, registry, ctr: ctrCommand, kubectl, kubectlAsync, stop };
  } catch (error) {
    await stop().catch((e: Error) => log(`teardown after the failure: ${e.message}`));
    throw new Error(`the cluster did not start: ${(error as Error).message}`, { cause: error });
  }
}

interface RegistryStart {
  readonly dir: string;
  readonly registryBin: string;
  readonly htpasswdDir: string;
  readonly run: (name: string, command: string, args: readonly string[], env?: NodeJS.ProcessEnv) => ManagedProcess;
  readonly until: typeof until;
}

/** The open and the private registry, their certificate issued by the cluster CA for the host address. */
async function startRegistries(registry: LocalRegistry, ca: Issued, s: RegistryStart): Promise<void> {
  const base = join(s.dir, 'registry');
  mkdirSync(registry.certDir, { recursive: true });
  writeFileSync(join(registry.certDir, 'ca.crt'), ca.cert);
  const serving = issueCertificate({ commonName: 'outrigger-local-registry', usage: 'server', issuer: ca, lifetimeMs: YEAR_MS, ipAddresses: [NET.hostAddress] });
  const cert = join(base, 'registry.crt');
  const key = join(base, 'registry.key');
  writeFileSync(cert, serving.cert);
  writeFileSync(key, serving.key, { mode: 0o600 });
  const { username, password } = registry.credentials;
  const htpasswd = join(base, 'htpasswd');
  writeFileSync(htpasswd, host(join(s.htpasswdDir, 'htpasswd'), [username], `${password}\n`), { mode: 0o600 });
  const env = { ...process.env, ...REGISTRY_ENV };
  const instances = [
    { name: 'registry', address: registry.address, expect: '200' },
    { name: 'registry-private', address: registry.privateAddress, expect: '401', htpasswd },
  ];
  for (const r of instances) {
    const dir = join(base, r.name);
    mkdirSync(dir, { recursive: true });
    const config = join(dir, 'config.yml');
    writeFileSync(config, registryConfig({ dir, address: r.address, cert, key, secret: randomBytes(24).toString('base64url'), htpasswd: r.htpasswd }));
    const p = s.run(r.name, s.registryBin, ['serve', config], env);
    await s.until(r.name, p, () => {
      const code = host('curl', ['-sS', '-o', '/dev/null', '-w', '%{http_code}', '--cacert', join(registry.certDir, 'ca.crt'), `https://${r.address}/v2/`]);
      if (code !== r.expect) throw new Error(`GET /v2/ answered ${code}, expected ${r.expect}`);
    });
  }
}

/** Removes everything a cluster in `dir` created, whether it stopped cleanly or its owner died. */
export async function tearDownCluster(dir: string, binDir?: string): Promise<void> {
  await killClusterProcesses(dir);
  // kube-proxy's own cleanup knows every rule it wrote (iptables and the rest).
  const proxy = binDir ? join(binDir, 'kube-proxy') : undefined;
  if (proxy && existsSync(proxy)) tryHost(proxy, ['--cleanup', '--v=0']);
  unmountUnder(dir);
  removeCgroups();
  tearDownHostNetwork(join(dir, 'host-network.json'));
  const absent = join(dir, 'absent-host-paths.json');
  const created = existsSync(absent) ? (JSON.parse(readFileSync(absent, 'utf8')) as string[]) : [];
  for (const path of created) {
    unmountUnder(path);
    rmSync(path, { recursive: true, force: true });
  }
  rmSync(dir, { recursive: true, force: true });
  rmSync(`${dir}.pid`, { force: true });
}

/** Everything of a cluster in `dir` that is still on the host: processes, mounts, cgroups, network. */
export function clusterLeftovers(dir: string): string[] {
  return [
    ...clusterProcesses(dir).map((pid) => `process ${pid} (${commandOf(pid)})`),
    ...mountsUnder(dir).map((point) => `mount ${point}`),
    ...cgroupDirs().map((path) => `cgroup ${path}`),
    ...hostNetworkLeftovers(),
    ...vethInterfaces().map((name) => `interface ${name}`),
    ...(existsSync(dir) ? [`directory ${dir}`] : []),
  ];
}

/** One cluster per host (fixed addresses): refuse if one runs, clean up after one that died. */
async function claim(dir: string, binDir: string, log: (line: string) => void): Promise<void> {
  let owner = pidFileOwner(dir);
  if (owner && clusterReapers().includes(owner)) {
    log(`waiting for pid ${owner} to remove a cluster whose owner died`);
    await waitForExit(owner, 120_000);
    owner = undefined;
  }
  if (owner && owner !== process.pid && processAlive(owner)) {
    throw new Error(`a local cluster is already running (pid ${owner}, ${dir}); stop it first (Ctrl-C in its terminal, or kill ${owner})`);
  }
  const left = clusterLeftovers(dir);
  if (left.length > 0) {
    log(`removing what an earlier cluster left behind: ${left.join('; ')}`);
    await tearDownCluster(dir, binDir);
  }
  writeFileSync(`${dir}.pid`, String(process.pid));
}

async function waitForExit(pid: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (processAlive(pid)) {
    if (Date.now() > deadline) throw new Error(`pid ${pid} is still removing an earlier cluster after ${timeoutMs / 1000}s; see its messages, or kill it and run npm run cluster -- --teardown`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

function checkHost(dir: string): void {
  if (process.getuid?.() !== 0) throw new Error('the local cluster needs root (network namespaces, iptables, cgroups, mounts): run it as root');
  const foreign = foreignKubernetes(dir);
  if (foreign.length > 0) throw new Error(`this host already runs Kubernetes node components (${foreign.join(', ')}); the local cluster would share their iptables chains`);
  const missing = ['ip', 'iptables', 'runc', 'mount', 'curl'].filter((c) => !whichOrUndefined(c));
  if (!existsSync('/usr/lib/cni/bridge')) missing.push('/usr/lib/cni/bridge (Debian package containernetworking-plugins)');
  if (missing.length > 0) throw new Error(`the local cluster needs ${missing.join(', ')}; tools/cluster/setup-cluster.sh installs them`);
}

/** Live kubelet, kube-proxy or containerd processes that are not this cluster's (zombies of a stopped one are not). */
function foreignKubernetes(dir: string): string[] {
  const ours = new Set(clusterProcesses(dir));
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry) && !ours.has(Number(entry)) && processAlive(Number(entry)))
    .flatMap((pid) => {
      try {
        const comm = readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
        return ['kubelet', 'kube-proxy', 'containerd'].includes(comm) ? [`${comm} (pid ${pid})`] : [];
      } catch {
        return [];
      }
    });
}

function issueClusterCertificates() {
  const ca = issueCertificate({ commonName: 'outrigger-local-cluster-ca', usage: 'ca', lifetimeMs: YEAR_MS });
  const client = (commonName: string, organizations: string[] = []) => issueCertificate({ commonName, organizations, usage: 'client', issuer: ca, lifetimeMs: YEAR_MS });
  return {
    ca,
    kubeletClient: client('kube-apiserver-kubelet-client'),
    node: client(`system:node:${NET.nodeName}`, ['system:nodes']),
    kubeletServing: issueCertificate({ commonName: NET.nodeName, usage: 'server', issuer: ca, lifetimeMs: YEAR_MS, dnsNames: [NET.nodeName], ipAddresses: [NET.hostAddress] }),
    controllerManager: client('system:kube-controller-manager'),
    scheduler: client('system:kube-scheduler'),
    proxy: client('system:kube-proxy'),
  };
}

/** `<ref> <archive>` lines, as tools/images/build.sh prints them. */
export function parseImages(stdout: string): LocalImage[] {
  return stdout
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean)
    .map((line) => {
      const [ref, archive, ...rest] = line.split(/\s+/);
      if (!ref || !archive || rest.length > 0) throw new Error(`tools/images/build.sh printed "${line}", expected "<ref> <archive>"`);
      return { ref, archive };
    });
}

async function until(name: string, process: ManagedProcess, probe: () => unknown, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    if (!process.running) throw new Error(`${name} exited; the end of ${process.logFile}:\n${process.logTail()}`);
    try {
      await probe();
      return;
    } catch (error) {
      last = (error as Error).message;
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(`${name} not ready after ${timeoutMs / 1000}s: ${last}; the end of ${process.logFile}:\n${process.logTail()}`);
}

function whichOrUndefined(command: string): string | undefined {
  try {
    return execFileSync('sh', ['-c', `command -v ${command}`], { encoding: 'utf8' }).trim() || undefined;
  } catch {
    return undefined;
  }
}

function which(command: string): string {
  const path = whichOrUndefined(command);
  if (!path) throw new Error(`${command} is not on PATH`);
  return path;
}

function commandOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim().slice(0, 120);
  } catch {
    return 'gone';
  }
}
