import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AuthorizationV1Api, CoreV1Api, KubeConfig, RbacAuthorizationV1Api, type V1ClusterRoleBinding, type V1Pod } from '@kubernetes/client-node';
import { type AdmissionContext, type JsonObject, mutatePod } from '@outrigger/admission';
import { type AgentProfile, agentProfileObject, referenceProfile } from '@outrigger/agent-profiles';
import { sidecarExtension } from '@outrigger/sidecar';
import { startApp, type ManagedProcess, writeTokenKubeconfig } from '@outrigger/control-plane';
import { POD_NAME_EXTRA } from '@outrigger/install';
import { applyObject, loadKubeClient, type KubeObject } from '@outrigger/kube';
import { inject } from 'vitest';
import { parseAllDocuments, stringify } from 'yaml';

const XXL_JOB_PROFILE = referenceProfile();

export const LABELS = { 'outrigger.dev/injection': 'enabled' };

/** A profiles file with the reference profile, its ClusterRole and binding renamed to `binding`. */
export function writeProfiles(dir: string, binding: string): string {
  const rules = XXL_JOB_PROFILE.rbac?.rules ?? [];
  const profile: AgentProfile = { ...XXL_JOB_PROFILE, rbac: { rules, clusterRole: binding, binding: { kind: 'ClusterRoleBinding', name: binding } } };
  return writeProfileFile(dir, profile);
}

/** A PROFILES_FILE holding `profiles` as AgentProfile documents. */
export function writeProfileFile(dir: string, ...profiles: AgentProfile[]): string {
  const file = join(dir, 'profiles.yaml');
  writeFileSync(file, profiles.map((p) => stringify(agentProfileObject(p))).join('---\n'));
  return file;
}

export interface SyncerOptions {
  readonly kubeconfigPath: string;
  /** Unset: AgentProfiles through the API. */
  readonly profilesFile?: string;
  readonly namespace: string;
  readonly lease: string;
  readonly port: number;
  readonly name: string;
  readonly dir: string;
  /** More settings, e.g. MAX_SUBJECTS_PER_NAMESPACE. */
  readonly env?: Record<string, string>;
}

/** `kubectl exec` with `who`'s credentials: its error output. On this bare control plane a request
 * that passed authorization and admission ends at "does not have a host assigned" (no node). */
function kubectlExec(who: readonly string[], namespace: string, pod: string): Promise<string> {
  const { binDir } = inject('controlPlane');
  return new Promise((done) => {
    execFile(join(binDir, 'kubectl'), [...who, 'exec', '-n', namespace, pod, '--', 'true'], (error, stdout, stderr) => done(`${error ? 'failed' : 'ok'}: ${stderr}${stdout}`.trim()));
  });
}
export const PAST_ADMISSION = /does not have a host assigned/;

/** As `user`, impersonated; `fromPod`: the pod its token is bound to, as the API server names it (the user extra the guard reads). */
export function execAs(user: string, namespace: string, pod: string, fromPod?: string): Promise<string> {
  const extra = fromPod === undefined ? [] : [`--as-user-extra=${POD_NAME_EXTRA}=${fromPod}`];
  return kubectlExec(['--kubeconfig', inject('controlPlane').kubeconfigPath, `--as=${user}`, ...extra], namespace, pod);
}

/**
 * An `attach` or `portforward` request as `user` (impersonated; `fromPod` as in execAs), sent as
 * kubectl sends it before upgrading the stream: its outcome. kubectl attach and port-forward wait
 * for a running pod first, and none runs on this bare control plane; the API server authorizes and
 * admits the request before it looks for the pod's node ("does not have a host assigned").
 */
export function connectAs(user: string, namespace: string, pod: string, subresource: 'attach' | 'portforward', fromPod?: string): Promise<string> {
  const { binDir, kubeconfigPath } = inject('controlPlane');
  const extra = fromPod === undefined ? [] : [`--as-user-extra=${POD_NAME_EXTRA}=${fromPod}`];
  const query = subresource === 'attach' ? 'container=app&stdout=true' : 'ports=8080';
  const path = `/api/v1/namespaces/${namespace}/pods/${pod}/${subresource}?${query}`;
  return new Promise((done) => {
    const child = execFile(join(binDir, 'kubectl'), ['--kubeconfig', kubeconfigPath, `--as=${user}`, ...extra, 'create', '--raw', path, '-f', '-'], (error, stdout, stderr) => done(`${error ? 'failed' : 'ok'}: ${stderr}${stdout}`.trim()));
    child.stdin?.end();
  });
}

/** `kubectl exec` into `target` with a real token of `serviceAccount` (TokenRequest API), bound to pod `boundTo` (a pod of its namespace) or to nothing. */
export async function execWithToken(kc: KubeConfig, dir: string, namespace: string, serviceAccount: string, target: string, boundTo?: string): Promise<string> {
  const file = await writeTokenKubeconfig(kc, join(dir, `token-${randomBytes(3).toString('hex')}.kubeconfig`), namespace, serviceAccount, boundTo);
  return kubectlExec(['--kubeconfig', file], namespace, target);
}

export const EXEC_GUARD_YAML = fileURLToPath(new URL('../../../deploy/base/rbac-syncer/exec-guard.yaml', import.meta.url));
export const EXEC_GUARD_NAME = 'outrigger-agent-exec-guard';

/** The exec guard exactly as deploy/ ships it (server-side apply; idempotent). */
export async function installExecGuard(kubeconfigPath: string): Promise<void> {
  const kc = loadKubeClient(kubeconfigPath);
  for (const doc of parseAllDocuments(readFileSync(EXEC_GUARD_YAML, 'utf8'))) {
    await applyObject(kc, doc.toJS() as KubeObject, { fieldManager: 'rbac-syncer-e2e', force: true });
  }
}

/** Starts the built syncer, with the shipped exec guard installed first (its bindings stay empty without it). */
export async function startSyncer(o: SyncerOptions): Promise<ManagedProcess> {
  await installExecGuard(o.kubeconfigPath);
  return startApp('rbac-syncer', {
    env: {
      PORT: String(o.port),
      KUBECONFIG: o.kubeconfigPath,
      PROFILES_FILE: o.profilesFile ?? '',
      POD_NAMESPACE: o.namespace,
      GRACE: '2s',
      REVOKED_KEEP: '2s',
      RESYNC: '30s',
      LEASE_NAME: o.lease,
      LEASE_DURATION: '3s',
      POD_NAME: o.name,
      ...o.env,
    },
    readyUrl: `http://127.0.0.1:${o.port}/readyz`,
    logFile: join(o.dir, `${o.name}.log`),
  });
}

/** A profile's opt-in and the reference parameters, for a pod whose container is `app`. */
export function optIn(profile: AgentProfile = XXL_JOB_PROFILE): Record<string, string> {
  const values = { enable: 'true', 'job-addr': 'http://xxl-job-admin:8080/xxl-job-admin', 'target-container': 'app', 'job-name': 'e2e' };
  return Object.fromEntries(Object.entries(values).map(([k, v]) => [`${profile.annotationPrefix}${k}`, v]));
}
export const OPT_IN = optIn();

/**
 * Creates a pod; an opted-in one as the webhook would admit it (the injector's own sidecar
 * extension adds the agent and the status annotation: no injector runs in these suites).
 */
export async function createPod(kc: KubeConfig, namespace: string, serviceAccount = 'default', optedIn = true, profile = XXL_JOB_PROFILE): Promise<string> {
  const name = `app-${randomBytes(3).toString('hex')}`;
  const pod = {
    metadata: { name, annotations: optedIn ? optIn(profile) : {} },
    spec: { serviceAccountName: serviceAccount, containers: [{ name: 'app', image: 'busybox' }] },
  };
  const body = optedIn ? injected(pod, namespace, profile) : pod;
  await kc.makeApiClient(CoreV1Api).createNamespacedPod({ namespace, body: body as V1Pod });
  return name;
}

/** The pod as the injector's own sidecar extension admits it. */
export function injected(pod: object, namespace: string, profile = XXL_JOB_PROFILE): JsonObject {
  const ctx = { uid: 'e2e', namespace, name: '', operation: 'CREATE', dryRun: false } as unknown as AdmissionContext;
  const result = mutatePod(pod as JsonObject, ctx, [sidecarExtension({ profiles: [profile], injectorVersion: 'e2e' })]);
  if (result.outcome !== 'allowed' || result.decision !== 'injected') throw new Error(`the sidecar extension did not inject: ${JSON.stringify(result)}`);
  return result.pod;
}

export async function deleteAllPods(kc: KubeConfig, namespace: string): Promise<void> {
  const core = kc.makeApiClient(CoreV1Api);
  const pods = await core.listNamespacedPod({ namespace });
  for (const pod of pods.items) await core.deleteNamespacedPod({ namespace, name: pod.metadata?.name ?? '', gracePeriodSeconds: 0 });
}

/**
 * `Kind:namespace/name` of each subject bound by a profile's binding `name`: one ClusterRoleBinding
 * `<name>.<namespace>` per namespace, so a suite that names its binding uniquely sees only its own.
 */
export async function bindingSubjects(kc: KubeConfig, name: string): Promise<string[]> {
  const list = await kc.makeApiClient(RbacAuthorizationV1Api).listClusterRoleBinding({ labelSelector: 'app.kubernetes.io/managed-by=outrigger-rbac-syncer' });
  return perNamespace(list.items, name)
    .flatMap((b) => (b.subjects ?? []).map((s) => `${s.kind}:${s.namespace ?? ''}/${s.name}`))
    .sort();
}

/** The per-namespace ClusterRoleBindings of binding `name`. */
export function perNamespace(items: readonly V1ClusterRoleBinding[], name: string): V1ClusterRoleBinding[] {
  return items.filter((b) => b.metadata?.name?.startsWith(`${name}.`) && b.metadata.labels?.['outrigger.dev/namespace'] === b.metadata.name.slice(name.length + 1));
}

export const sa = (ns: string, name = 'default') => `ServiceAccount:${ns}/${name}`;

export async function eventually<T>(read: () => Promise<T>, accept: (value: T) => boolean, what: string, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read().catch((e: Error) => e as unknown as T);
    if (accept(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; last: ${JSON.stringify(value)?.slice(0, 400)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** A sample's value from /metrics; `labels` must all appear in the sample's label set. */
export async function metric(port: number, name: string, labels: readonly string[] = []): Promise<number | undefined> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const line = text.split('\n').find((l) => (l.startsWith(`${name}{`) || l.startsWith(`${name} `)) && labels.every((x) => l.includes(x)));
  return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : undefined;
}

export async function canExec(kc: KubeConfig, namespace: string, serviceAccount: string): Promise<boolean> {
  const review = await kc.makeApiClient(AuthorizationV1Api).createSubjectAccessReview({
    body: {
      spec: {
        user: `system:serviceaccount:${namespace}:${serviceAccount}`,
        groups: ['system:serviceaccounts', `system:serviceaccounts:${namespace}`, 'system:authenticated'],
        resourceAttributes: { verb: 'create', resource: 'pods', subresource: 'exec', namespace },
      },
    },
  });
  return review.status?.allowed === true;
}
