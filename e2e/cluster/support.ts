import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { inject } from 'vitest';
import { INJECTION_LABEL_KEY, INJECTION_LABEL_VALUE, namespacesDigest } from '@outrigger/admission';
import { awaitRunLog, triggerShellJob } from '@outrigger/control-plane';
import { POD_NAME_EXTRA } from '@outrigger/install';

const { kubeconfigPath, binDir } = inject('cluster');
const kubectlBin = join(binDir, 'kubectl');
const execFileAsync = promisify(execFile);

export const INJECTION_LABEL = `${INJECTION_LABEL_KEY}=${INJECTION_LABEL_VALUE}`;
export const OUTRIGGER_NAMESPACE = 'outrigger-system';

/** kubectl against the suite's cluster; throws with kubectl's own message. */
export function kubectl(args: readonly string[], input?: string): string {
  try {
    return execFileSync(kubectlBin, ['--kubeconfig', kubeconfigPath, ...args], { encoding: 'utf8', input, stdio: ['pipe', 'pipe', 'pipe'] });
  } catch (error) {
    const e = error as { stderr?: string; message: string };
    throw new Error(`kubectl ${args.join(' ')}: ${e.stderr?.trim() || e.message}`, { cause: error });
  }
}

/** kubectl without blocking the event loop (for load generators running beside a rollout). */
export async function kubectlAsync(args: readonly string[], input?: string): Promise<string> {
  const child = execFileAsync(kubectlBin, ['--kubeconfig', kubeconfigPath, ...args], { encoding: 'utf8' });
  if (input !== undefined) {
    child.child.stdin?.end(input);
  }
  return (await child).stdout;
}

export function kubectlJson<T>(args: readonly string[]): T {
  return JSON.parse(kubectl([...args, '-o', 'json'])) as T;
}

/** `namespace/name` of every ServiceAccount bound by a profile's binding: one ClusterRoleBinding `<binding>.<namespace>` per namespace. */
export function boundServiceAccounts(binding = 'xxl-agent-exec'): string[] {
  const list = kubectlJson<{ items: { metadata: { name: string }; subjects?: { namespace?: string; name: string }[] }[] }>([
    'get',
    'clusterrolebindings',
    '-l',
    'app.kubernetes.io/managed-by=outrigger-rbac-syncer',
    '-o',
    'json',
  ]);
  return list.items.filter((b) => b.metadata.name.startsWith(`${binding}.`)).flatMap((b) => (b.subjects ?? []).map((s) => `${s.namespace ?? ''}/${s.name}`));
}

/** The XXL-JOB access token of the suite's namespaces (Secret xxl-job-access-token, key token, which the reference profile reads). */
export const ACCESS_TOKEN = 'outrigger-e2e-access-token';

/** A fresh namespace; labelled for injection unless `labelled` is false, and then holding the agent's access token as a team creates it. */
export function createNamespace(prefix: string, labelled = true): string {
  const name = `${prefix}-${randomBytes(3).toString('hex')}`;
  kubectl(['create', 'namespace', name]);
  if (labelled) {
    kubectl(['label', 'namespace', name, INJECTION_LABEL]);
    kubectl(['create', 'secret', 'generic', 'xxl-job-access-token', '-n', name, `--from-literal=token=${ACCESS_TOKEN}`]);
  }
  return name;
}

/** A fixture manifest from fixtures/, applied into `namespace`. */
export function applyFixture(name: string, namespace: string): void {
  kubectl(['apply', '-n', namespace, '-f', '-'], readFileSync(join(import.meta.dirname, 'fixtures', name), 'utf8'));
}

export async function eventually<T>(attempt: () => T | Promise<T>, what: string, timeoutMs = 180_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  for (;;) {
    try {
      return await attempt();
    } catch (error) {
      last = (error as Error).message;
    }
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what} after ${timeoutMs / 1000}s: ${last}`);
    await new Promise((r) => setTimeout(r, 1_000));
  }
}

export interface PodJson {
  readonly metadata: { readonly name: string; readonly namespace: string; readonly annotations?: Record<string, string>; readonly labels?: Record<string, string>; readonly deletionTimestamp?: string };
  readonly spec: {
    readonly containers: readonly { readonly name: string; readonly image: string }[];
    readonly initContainers?: readonly { readonly name: string; readonly image: string; readonly restartPolicy?: string }[];
    readonly serviceAccountName?: string;
  };
  readonly status: {
    readonly phase: string;
    readonly containerStatuses?: readonly { readonly name: string; readonly ready: boolean; readonly state: Record<string, unknown> }[];
    readonly initContainerStatuses?: readonly { readonly name: string; readonly ready: boolean; readonly state: Record<string, unknown> }[];
  };
}

export function pods(namespace: string, selector: string): PodJson[] {
  return kubectlJson<{ items: PodJson[] }>(['get', 'pods', '-n', namespace, '-l', selector]).items;
}

/** Each ready injector replica's /readyz details, through the API server's pod proxy. */
function injectorReadyz(): Array<{ pod: string; details: { profiles?: { generations?: Record<string, number> }; namespaces?: { held?: number; digest?: string } } }> {
  const ready = pods(OUTRIGGER_NAMESPACE, 'app.kubernetes.io/name=outrigger-injector').filter((p) => !p.metadata.deletionTimestamp && p.status.containerStatuses?.every((c) => c.ready));
  if (ready.length === 0) throw new Error('no injector replica is ready');
  return ready.map((pod) => ({ pod: pod.metadata.name, details: JSON.parse(kubectl(['get', '--raw', `/api/v1/namespaces/${OUTRIGGER_NAMESPACE}/pods/https:${pod.metadata.name}:8443/proxy/readyz`])).details ?? {} }));
}

/**
 * Waits until every ready injector replica holds AgentProfile `name` at the generation the API
 * server has (none once it is deleted): each replica watches on its own, and a dry run reaches one.
 */
export async function injectorsHold(name: string, timeoutMs = 60_000): Promise<void> {
  await eventually(() => {
    const stored = kubectl(['get', 'agentprofile', name, '--ignore-not-found', '-o', 'jsonpath={.metadata.generation}']);
    const want = stored ? Number(stored) : undefined;
    for (const { pod, details } of injectorReadyz()) {
      const held = details.profiles?.generations?.[name];
      if (held !== want) throw new Error(`injector ${pod} holds generation ${held ?? 'none'} of AgentProfile ${name}, the API server ${want ?? 'none'}`);
    }
  }, `every injector replica to hold AgentProfile ${name} as stored`, timeoutMs);
}

/** Waits until every ready injector replica holds the labelled namespaces as the API server lists them (their digest, as `outrigger check` compares it). */
export async function injectorsHoldNamespaces(timeoutMs = 60_000): Promise<void> {
  await eventually(() => {
    const listed = kubectlJson<{ items: Array<{ metadata: { name: string; resourceVersion: string } }> }>(['get', 'namespaces', '-l', INJECTION_LABEL]).items;
    const want = namespacesDigest(listed.map(({ metadata }) => metadata));
    for (const { pod, details } of injectorReadyz()) {
      if (details.namespaces?.digest !== want) throw new Error(`injector ${pod} holds ${details.namespaces?.held ?? 'no'} labelled namespaces (digest ${details.namespaces?.digest ?? 'none'}), the API server lists ${listed.length} (digest ${want})`);
    }
  }, 'every injector replica to hold the labelled namespaces as stored', timeoutMs);
}

/** The agent container, wherever the profile put it (a container, or a native-sidecar init container). */
export function agentOf(pod: PodJson): { name: string; image: string; restartPolicy?: string } | undefined {
  const isAgent = (c: { name: string }) => c.name === 'xxl-agent' || c.name === 'xxl-agent-native';
  return pod.spec.containers.find(isAgent) ?? pod.spec.initContainers?.find(isAgent);
}

/**
 * `kubectl exec` into `namespace/pod` (its `container`) as a ServiceAccount, impersonated: its
 * output, or the error it ended with. `fromPod` is the pod the caller's token is bound to, as the API
 * server names it for a pod's own token (the user extra the exec guard reads); without it, a token
 * bound to no pod.
 */
export function execAs(serviceAccount: string, namespace: string, pod: string, options: { readonly container?: string; readonly fromPod?: string } = {}): string {
  const as = [`--as=system:serviceaccount:${serviceAccount}`, ...(options.fromPod ? [`--as-user-extra=${POD_NAME_EXTRA}=${options.fromPod}`] : [])];
  try {
    return kubectl(['exec', ...as, '-n', namespace, pod, ...(options.container ? ['-c', options.container] : []), '--', 'echo', 'exec-reached-the-pod']);
  } catch (error) {
    return (error as Error).message;
  }
}

/**
 * The address the pod's agent registered, as xxl-job-admin calls it (without the trailing slash):
 * the pod IP (reachable from the host, the node's bridge), the agent's port and its executor key, as
 * `xxl-agent address` prints it to whoever may exec into the pod.
 */
export function agentAddress(namespace: string, pod: string, container?: string): string {
  const name = container ?? agentOf(kubectlJson<PodJson>(['get', 'pod', pod, '-n', namespace]))?.name;
  if (!name) throw new Error(`pod ${namespace}/${pod} has no agent container`);
  return kubectl(['exec', '-n', namespace, pod, '-c', name, '--', '/xxl-agent', 'address']).trim().replace(/\/$/, '');
}

/**
 * Triggers a GLUE_SHELL job on a pod's agent as xxl-job-admin triggers it (POST /run with the
 * access token), and returns the run's log (/log) once the run has ended: what the script printed
 * in the agent's target container, or why it could not run there.
 */
export async function runJob(namespace: string, pod: string, script: string): Promise<string> {
  const { address, run } = await eventually(async () => {
    const address = agentAddress(namespace, pod);
    return { address, run: await triggerShellJob(address, ACCESS_TOKEN, script) };
  }, `the agent in ${namespace}/${pod} to take a run`, 60_000);
  return awaitRunLog(address, ACCESS_TOKEN, run);
}

/** `outrigger <args>` from the sources, against the suite's cluster: its exit code and output. */
export function outrigger(args: readonly string[]): { code: number; stdout: string; stderr: string } {
  const main = join(import.meta.dirname, '..', '..', 'apps', 'cli', 'src', 'main.ts');
  const result = spawnSync(process.execPath, ['--import', 'tsx', '--conditions', 'development', main, ...args, '--kubeconfig', kubeconfigPath], { encoding: 'utf8', cwd: join(import.meta.dirname, '..', '..') });
  return { code: result.status ?? -1, stdout: result.stdout, stderr: result.stderr };
}

/** `outrigger <args>` like `outrigger`, without blocking the event loop (for load generators running beside it). */
export async function outriggerAsync(args: readonly string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const main = join(import.meta.dirname, '..', '..', 'apps', 'cli', 'src', 'main.ts');
  try {
    const { stdout, stderr } = await execFileAsync(process.execPath, ['--import', 'tsx', '--conditions', 'development', main, ...args, '--kubeconfig', kubeconfigPath], { encoding: 'utf8', cwd: join(import.meta.dirname, '..', '..'), maxBuffer: 64 * 1024 * 1024 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout ?? '', stderr: e.stderr ?? String(error) };
  }
}

/** Scales an Outrigger Deployment and waits until it is there (rolled out) or gone (no pod left). */
export async function scaleOutrigger(deployment: string, replicas: number): Promise<void> {
  kubectl(['scale', '-n', OUTRIGGER_NAMESPACE, `deployment/${deployment}`, `--replicas=${replicas}`]);
  if (replicas > 0) {
    kubectl(['rollout', 'status', '-n', OUTRIGGER_NAMESPACE, `deployment/${deployment}`, '--timeout=180s']);
    return;
  }
  await eventually(() => {
    const left = pods(OUTRIGGER_NAMESPACE, `app.kubernetes.io/name=${deployment}`).length;
    if (left > 0) throw new Error(`${left} pod(s) left`);
  }, `the pods of ${deployment} to be gone`);
}
