import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { boundServiceAccounts, createNamespace, eventually, execAs, injectorsHold, injectorsHoldNamespaces, kubectl, kubectlJson, type PodJson } from './support.ts';

// A profile for some teams only (spec.namespaceSelector) and an agent sized per pod within the
// profile's bounds (spec.overrides): injection, bindings, the exec guard, the status count and the
// running pod's resources, on the real node.
const NAME = 'scoped-agent';
const ROLE = 'scoped-agent-exec';
const PREFIX = `${NAME}.outrigger.test/`;
const TEAM = 'outrigger.test/scope-team';
const SYNCER_ROLE = 'outrigger-rbac-syncer';
const BUSYBOX = 'localhost/busybox:local';
const RESTRICTED = { runAsNonRoot: true, runAsUser: 65532, allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] }, seccompProfile: { type: 'RuntimeDefault' } };
const MIB = 1024 * 1024;

const profile = (namespaceSelector: object) => ({
  apiVersion: 'outrigger.dev/v1alpha1',
  kind: 'AgentProfile',
  metadata: { name: NAME },
  spec: {
    annotationPrefix: PREFIX,
    container: {
      name: NAME,
      image: BUSYBOX,
      imagePullPolicy: 'Never',
      command: ['sleep', '3600'],
      resources: { requests: { cpu: '10m', memory: '16Mi' }, limits: { cpu: '100m', memory: '64Mi' } },
      securityContext: RESTRICTED,
    },
    namespaceSelector,
    overrides: {
      resources: [
        { resource: 'requests.memory', min: '8Mi', max: '64Mi' },
        { resource: 'limits.memory', min: '32Mi', max: '128Mi' },
      ],
    },
    rbac: { clusterRole: ROLE, rules: [{ apiGroups: [''], resources: ['pods/exec'], verbs: ['create', 'get'] }] },
  },
});
const onlyTeam = (...teams: string[]) => ({ matchExpressions: [{ key: TEAM, operator: 'In', values: teams }] });

const podYaml = (name: string, annotations: Record<string, string> = {}) =>
  stringify({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, annotations: { [`${PREFIX}enable`]: 'true', ...annotations } },
    spec: { terminationGracePeriodSeconds: 1, containers: [{ name: 'app', image: BUSYBOX, imagePullPolicy: 'Never', command: ['sleep', '3600'] }] },
  });

interface AgentJson {
  readonly name: string;
  readonly resources?: { readonly requests?: Record<string, string>; readonly limits?: Record<string, string> };
}
const agentIn = (pod: PodJson) => (pod.spec.containers as readonly AgentJson[]).find((c) => c.name === NAME);
/** The pod as admission leaves it (server-side dry run), or kubectl's refusal. */
const admitted = (ns: string, annotations: Record<string, string> = {}) => JSON.parse(kubectl(['create', '-n', ns, '--dry-run=server', '-o', 'json', '-f', '-'], podYaml('dry-run', annotations))) as PodJson;
const refusal = (ns: string, annotations: Record<string, string>) => {
  try {
    admitted(ns, annotations);
    return 'admitted';
  } catch (error) {
    return (error as Error).message;
  }
};
const bound = () => boundServiceAccounts(ROLE).sort();
const selectedCount = () => kubectlJson<{ status?: { namespaces?: number } }>(['get', 'agentprofile', NAME]).status?.namespaces;

function runPod(ns: string, name: string, annotations: Record<string, string> = {}): PodJson {
  kubectl(['create', '-n', ns, '-f', '-'], podYaml(name, annotations));
  return readyPod(ns, name);
}

function readyPod(ns: string, name: string): PodJson {
  kubectl(['wait', '--for=condition=Ready', `pod/${name}`, '-n', ns, '--timeout=120s']);
  return kubectlJson<PodJson>(['get', 'pod', name, '-n', ns]);
}

/** The agent's memory limit as its cgroup on the node enforces it (cgroup v2, else v1). */
const cgroupMemoryLimit = (ns: string, pod: string) =>
  Number(kubectl(['exec', '-n', ns, pod, '-c', NAME, '--', 'sh', '-c', 'cat /sys/fs/cgroup/memory.max 2>/dev/null || cat /sys/fs/cgroup/memory/memory.limit_in_bytes']).trim());

let teamA = '';
let teamB = '';
const originalSyncerRole = kubectl(['get', 'clusterrole', SYNCER_ROLE, '-o', 'json']);
const READER = `${NAME}-pod-reader`;

beforeAll(async () => {
  teamA = createNamespace('scope-a');
  teamB = createNamespace('scope-b');
  kubectl(['label', 'namespace', teamA, `${TEAM}=a`]);
  kubectl(['label', 'namespace', teamB, `${TEAM}=b`]);
  await injectorsHoldNamespaces();
  // The admin's deliberate step for a new profile with RBAC: the syncer may write and bind its role, by name.
  const rules = (JSON.parse(originalSyncerRole) as { rules: { resources: string[]; resourceNames?: string[] }[] }).rules;
  const patch = rules.flatMap((rule, i) => (rule.resourceNames && rule.resources[0] === 'clusterroles' ? [{ op: 'add', path: `/rules/${i}/resourceNames/-`, value: ROLE }] : []));
  kubectl(['patch', 'clusterrole', SYNCER_ROLE, '--type=json', '-p', JSON.stringify(patch)]);
  kubectl(['apply', '--server-side', '-f', '-'], stringify(profile(onlyTeam('a'))));
  await injectorsHold(NAME);
  await eventually(() => expect(agentIn(admitted(teamA))).toBeDefined(), 'the scoped profile in force', 60_000);
});

afterAll(() => {
  kubectl(['delete', '--ignore-not-found', 'agentprofile', NAME]);
  const role = JSON.parse(originalSyncerRole) as { metadata: Record<string, unknown> };
  delete role.metadata['resourceVersion'];
  kubectl(['replace', '-f', '-'], JSON.stringify(role));
  kubectl(['delete', '--ignore-not-found', 'clusterrolebindings', '-l', `outrigger.dev/profile=${NAME}`]);
  kubectl(['delete', '--ignore-not-found', 'clusterrolebinding', READER]);
  kubectl(['delete', '--ignore-not-found', 'clusterrole', ROLE, READER]);
});

describe('a profile scoped to one of two labelled namespaces (spec.namespaceSelector) on the real node', () => {
  it('injects, binds and counts in the namespace it selects; in the other one the opted-in pod gets a warning and no agent, and nothing is bound', async () => {
    // --warnings-as-errors: kubectl exits non-zero on the webhook's warning (a dry run stores nothing).
    expect(() => kubectl(['create', '-n', teamB, '--dry-run=server', '--warnings-as-errors', '-f', '-'], podYaml('warned'))).toThrow(
      `profile ${NAME} does not apply in namespace ${teamB} (its spec.namespaceSelector does not pick it): no agent`,
    );
    const inA = runPod(teamA, 'worker');
    const inB = runPod(teamB, 'worker');
    expect(inA.spec.containers.map((c) => c.name)).toEqual(['app', NAME]);
    expect(inB.spec.containers.map((c) => c.name)).toEqual(['app']);
    await eventually(() => expect(bound()).toEqual([`${teamA}/default`]), 'the selected namespace\'s ServiceAccount bound', 60_000);
    // Counts are written at most every 5 s.
    await eventually(() => expect(selectedCount()).toBe(1), 'status.namespaces 1', 30_000);
    // B's opted-in pod runs on; nothing comes to bind it.
    expect(bound()).toEqual([`${teamA}/default`]);
  });

  it('the exec guard needs no selector of its own: only selected namespaces are bound, so the unselected namespace\'s ServiceAccount holds no exec right at all, and the selected one\'s stops at its own namespace', async () => {
    // kubectl reads the pod before it execs: a reader grant that is not Outrigger's, for both.
    kubectl(['create', 'clusterrole', READER, '--verb=get', '--resource=pods']);
    kubectl(['create', 'clusterrolebinding', READER, `--clusterrole=${READER}`, `--serviceaccount=${teamA}:default`, `--serviceaccount=${teamB}:default`]);
    // The API server authorizes from its own cache of the grant, a moment after it is created.
    await eventually(() => expect(execAs(`${teamA}:default`, teamA, 'worker', { container: 'app', fromPod: 'worker' })).toContain('exec-reached-the-pod'), 'the reader grant in force', 30_000);
    const guarded = execAs(`${teamA}:default`, teamB, 'worker', { container: 'app', fromPod: 'worker' });
    expect(guarded).toContain('outrigger exec guard:');
    expect(guarded).toContain(`reaches only pods of its own namespace ${teamA}; exec into ${teamB}/worker is refused`);
    // Unselected: refused by RBAC itself (no role at all), before any guard is asked.
    for (const target of [teamB, teamA]) {
      const unbound = execAs(`${teamB}:default`, target, 'worker', { container: 'app', fromPod: 'worker' });
      expect(unbound, `exec into ${target}/worker`).toMatch(/cannot (create|get) resource "pods\/exec"/);
      expect(unbound).not.toContain('outrigger exec guard');
    }
  });
});

describe('agent resources within the profile\'s bounds (spec.overrides) on the real node', () => {
  it('a pod annotation within bounds sizes the running agent (its cgroup enforces it); the namespace annotation gives the default for pods without one', async () => {
    kubectl(['annotate', 'namespace', teamA, `${PREFIX}limits.memory=96Mi`]);
    await eventually(() => expect(agentIn(admitted(teamA))?.resources?.limits?.['memory']).toBe('96Mi'), 'the namespace default in force', 30_000);
    try {
      const sized = runPod(teamA, 'sized', { [`${PREFIX}limits.memory`]: '48Mi', [`${PREFIX}requests.memory`]: '24Mi' });
      expect(agentIn(sized)?.resources).toEqual({ requests: { cpu: '10m', memory: '24Mi' }, limits: { cpu: '100m', memory: '48Mi' } });
      expect(cgroupMemoryLimit(teamA, 'sized')).toBe(48 * MIB);
      // Each injector replica learns the namespace's annotation from its own watch.
      await injectorsHoldNamespaces();
      const defaulted = runPod(teamA, 'defaulted');
      expect(agentIn(defaulted)?.resources).toEqual({ requests: { cpu: '10m', memory: '16Mi' }, limits: { cpu: '100m', memory: '96Mi' } });
      expect(cgroupMemoryLimit(teamA, 'defaulted')).toBe(96 * MIB);
    } finally {
      kubectl(['annotate', 'namespace', teamA, `${PREFIX}limits.memory-`]);
    }
  });

  it('out of bounds, malformed, not overridable or a request above its limit: refused at admission naming the annotation and the bound', async () => {
    const key = `${PREFIX}limits.memory`;
    expect(refusal(teamA, { [key]: '512Mi' })).toContain(`annotation ${key}: "512Mi" is outside the bounds of profile ${NAME}: limits.memory from 32Mi to 128Mi`);
    expect(refusal(teamA, { [key]: '16Mi' })).toContain(`annotation ${key}: "16Mi" is outside the bounds of profile ${NAME}: limits.memory from 32Mi to 128Mi`);
    expect(refusal(teamA, { [key]: 'lots' })).toContain(`annotation ${key}: "lots" is not a Kubernetes quantity like 100m or 64Mi`);
    expect(refusal(teamA, { [`${PREFIX}limits.cpu`]: '200m' })).toContain(`annotation ${PREFIX}limits.cpu: profile ${NAME} does not let limits.cpu of its agent be changed (spec.overrides.resources has no limits.cpu)`);
    expect(refusal(teamA, { [key]: '32Mi', [`${PREFIX}requests.memory`]: '32Mi' })).toBe('admitted');
    expect(refusal(teamA, { [key]: '32Mi', [`${PREFIX}requests.memory`]: '48Mi' })).toContain(
      `annotation ${PREFIX}requests.memory and annotation ${key}: the agent's memory request 48Mi would be above its limit 32Mi`,
    );
    // A namespace default beyond the bounds refuses the namespace's pods, naming the namespace.
    kubectl(['annotate', 'namespace', teamA, `${key}=1Gi`]);
    try {
      await eventually(() => expect(refusal(teamA, {})).toContain(`annotation ${key} of namespace ${teamA}: "1Gi" is outside the bounds of profile ${NAME}: limits.memory from 32Mi to 128Mi`), 'the namespace default refused', 30_000);
    } finally {
      kubectl(['annotate', 'namespace', teamA, `${key}-`]);
    }
  });
});

describe('changing the selector on the real node', () => {
  it('widened, new pods of the newly selected namespace get the agent at once and its ServiceAccount is bound within seconds; narrowed, the dropped namespace gets no agent and is unbound at once, without the grace, as an unlabelled namespace is', async () => {
    kubectl(['apply', '--server-side', '-f', '-'], stringify(profile(onlyTeam('a', 'b'))));
    await injectorsHold(NAME);
    await eventually(() => expect(agentIn(admitted(teamB))).toBeDefined(), 'the widened selector in force for new pods', 30_000);
    const created = Date.now();
    runPod(teamB, 'joined');
    await eventually(() => expect(bound()).toEqual([`${teamA}/default`, `${teamB}/default`].sort()), 'the newly selected namespace bound', 30_000);
    console.log(`newly selected namespace bound ${((Date.now() - created) / 1000).toFixed(1)} s after its pod was created (including the pod's start)`);
    await eventually(() => expect(selectedCount()).toBe(2), 'status.namespaces 2', 30_000);

    kubectl(['apply', '--server-side', '-f', '-'], stringify(profile(onlyTeam('b'))));
    await injectorsHold(NAME);
    await eventually(() => expect(agentIn(admitted(teamA))).toBeUndefined(), 'the narrowed selector in force for new pods', 30_000);
    await eventually(() => expect(selectedCount()).toBe(1), 'status.namespaces 1', 30_000);
    // Its agents still run, but the grace (60 s as deployed) is for pods that go, not for a namespace the profile leaves.
    await eventually(() => expect(bound()).toEqual([`${teamB}/default`]), 'the dropped namespace unbound at once', 30_000);
  });
});
