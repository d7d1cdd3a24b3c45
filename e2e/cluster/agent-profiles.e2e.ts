import { afterAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { boundServiceAccounts, createNamespace, eventually, injectorsHold, kubectl, kubectlJson, type PodJson } from './support.ts';

// An admin adds an agent to a running installation: an AgentProfile, validated by the API server,
// taken by both services without a restart, reported on its status; then edited and deleted.
const NAME = 'e2e-agent';
const ROLE = 'e2e-agent-exec';
const PREFIX = 'e2e-agent.outrigger.test/';
const SYNCER_ROLE = 'outrigger-rbac-syncer';

const profile = (image: string, extraRules: object[] = []) => ({
  apiVersion: 'outrigger.dev/v1alpha1',
  kind: 'AgentProfile',
  metadata: { name: NAME },
  spec: {
    annotationPrefix: PREFIX,
    container: {
      name: NAME,
      image,
      imagePullPolicy: 'IfNotPresent',
      resources: { requests: { cpu: '10m', memory: '32Mi' }, limits: { cpu: '100m', memory: '64Mi' } },
      securityContext: { runAsNonRoot: true, runAsUser: 65532, allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] }, seccompProfile: { type: 'RuntimeDefault' } },
    },
    parameters: [
      { annotation: 'job-addr', env: 'XXL_JOB_ADDR', required: true, format: 'url' },
      { annotation: 'target-container', env: 'CONTAINER_NAME', required: true, containerName: true },
      { annotation: 'job-name', env: 'XXL_JOB_NAME', required: true },
    ],
    fieldEnv: [
      { env: 'NAMESPACE', fieldPath: 'metadata.namespace' },
      { env: 'POD_NAME', fieldPath: 'metadata.name' },
    ],
    rbac: { clusterRole: ROLE, binding: { kind: 'ClusterRoleBinding', name: ROLE }, rules: [{ apiGroups: [''], resources: ['pods/exec'], verbs: ['create', 'get'] }, ...extraRules] },
  },
});

const OPT_IN = { [`${PREFIX}enable`]: 'true', [`${PREFIX}job-addr`]: 'http://admin:8080', [`${PREFIX}target-container`]: 'app', [`${PREFIX}job-name`]: 'e2e' };
const pod = (name: string) => stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name, annotations: OPT_IN }, spec: { containers: [{ name: 'app', image: 'localhost/busybox:local', command: ['sleep', '3600'] }] } });

/** The pod as admission leaves it (server-side dry run: the webhook runs, nothing is stored). */
const admitted = (ns: string) => JSON.parse(kubectl(['create', '-n', ns, '--dry-run=server', '-o', 'json', '-f', '-'], pod('dry-run'))) as PodJson;
const agent = (p: PodJson) => p.spec.containers.find((c) => c.name === NAME) as ({ image: string; resources?: { limits?: Record<string, string> } } | undefined);

interface Status {
  readonly boundSubjects?: number;
  readonly conditions?: readonly { type: string; status: string; reason: string; message: string }[];
}
const status = () => kubectlJson<{ status?: Status }>(['get', 'agentprofile', NAME]).status ?? {};
const synced = () => status().conditions?.find((c) => c.type === 'Synced');
const subjects = () => boundServiceAccounts(ROLE).join(' ');
const originalSyncerRole = kubectl(['get', 'clusterrole', SYNCER_ROLE, '-o', 'json']);

afterAll(() => {
  kubectl(['delete', '--ignore-not-found', 'agentprofile', NAME]);
  const role = JSON.parse(originalSyncerRole) as { metadata: Record<string, unknown> };
  delete role.metadata['resourceVersion'];
  kubectl(['replace', '-f', '-'], JSON.stringify(role));
  kubectl(['delete', 'clusterrolebindings', '-l', `outrigger.dev/profile=${NAME}`]);
  kubectl(['delete', '--ignore-not-found', 'clusterrole', ROLE]);
});

describe('AgentProfiles on a real cluster: an admin adds, edits and removes an agent without restarting anything', () => {
  it('kubectl apply refuses a bad AgentProfile and names the field', () => {
    const bad = profile('localhost/outrigger/stand-in-agent:local', [{ apiGroups: [''], resources: ['pods'], verbs: ['*'] }]);
    expect(() => kubectl(['apply', '-f', '-'], stringify(bad))).toThrow(/spec\.rbac\.rules\[1\]\.verbs/);
    expect(() => kubectl(['get', 'agentprofile', NAME])).toThrow(/not found/);
  });

  it('a new profile injects at once, binds once the syncer is granted its role by name, follows an edit, and once deleted injects nothing and is unbound after the grace', async () => {
    const ns = createNamespace('profile');
    expect(agent(admitted(ns))).toBeUndefined();
    kubectl(['apply', '--server-side', '-f', '-'], stringify(profile('localhost/outrigger/stand-in-agent:local')));

    // The injector takes it within seconds; the syncer says it may not grant its role yet.
    await eventually(() => expect(agent(admitted(ns))?.image).toBe('localhost/outrigger/stand-in-agent:local'), 'the new agent injected', 30_000);
    await injectorsHold(NAME);
    await eventually(() => expect(synced()).toMatchObject({ status: 'False', reason: 'MissingPermissions' }), 'Synced=False MissingPermissions', 30_000);
    expect(synced()?.message).toContain(`bind clusterroles.rbac.authorization.k8s.io named ${ROLE}`);

    // The admin's deliberate step: the syncer may write and bind this role, by name (its bindings, one per namespace, need no name).
    const rules = (JSON.parse(originalSyncerRole) as { rules: { resources: string[]; resourceNames?: string[] }[] }).rules;
    const patch = rules.flatMap((rule, i) => (rule.resourceNames && rule.resources[0] === 'clusterroles' ? [{ op: 'add', path: `/rules/${i}/resourceNames/-`, value: ROLE }] : []));
    expect(patch).toHaveLength(1);
    kubectl(['patch', 'clusterrole', SYNCER_ROLE, '--type=json', '-p', JSON.stringify(patch)]);
    kubectl(['create', '-n', ns, '-f', '-'], pod('worker'));
    await eventually(() => expect(subjects()).toContain(`${ns}/default`), 'the ServiceAccount bound', 60_000);
    await eventually(() => expect(synced()).toMatchObject({ status: 'True', reason: 'Synced' }), 'Synced=True', 30_000);
    // Counts are written at most every 5 s: the one bound may follow the condition.
    await eventually(() => expect(status().boundSubjects).toBeGreaterThanOrEqual(1), 'the bound ServiceAccount counted', 30_000);
    expect(kubectl(['get', 'agentprofile', NAME]).split('\n')[1]).toMatch(new RegExp(`^${NAME}\\s+${PREFIX.replace('.', '\\.')}\\s`));

    // An edit: both services follow.
    const edited = profile('localhost/outrigger/stand-in-agent:local', [{ apiGroups: [''], resources: ['pods/log'], verbs: ['get'] }]);
    edited.spec.container.resources.limits.memory = '96Mi';
    kubectl(['apply', '--server-side', '-f', '-'], stringify(edited));
    await eventually(() => expect(agent(admitted(ns))?.resources?.limits?.['memory']).toBe('96Mi'), 'the edit injected', 30_000);
    await eventually(() => expect(kubectl(['get', 'clusterrole', ROLE, '-o', 'jsonpath={.rules[*].resources}'])).toContain('pods/log'), 'the role edited', 30_000);

    // Deleted: no agent for new pods at once; the bindings keep their subjects through the grace, then go.
    kubectl(['delete', 'agentprofile', NAME]);
    await eventually(() => expect(agent(admitted(ns))).toBeUndefined(), 'no agent injected any more', 30_000);
    await eventually(() => expect(subjects()).toBe(''), 'the bindings removed after the grace', 180_000);
  });

  it('a RoleBinding profile the syncer may not bind for says so on its status at once, as a ClusterRoleBinding one does', async () => {
    const roleBindings = profile('localhost/outrigger/stand-in-agent:local');
    roleBindings.spec.rbac.binding.kind = 'RoleBinding';
    kubectl(['apply', '--server-side', '-f', '-'], stringify(roleBindings));
    try {
      // deploy/base lets the syncer write no RoleBinding: the admin grants that per profile.
      await eventually(() => expect(synced()).toMatchObject({ status: 'False', reason: 'MissingPermissions' }), 'Synced=False MissingPermissions', 30_000);
      expect(synced()?.message).toMatch(/rolebindings\.rbac\.authorization\.k8s\.io/);
    } finally {
      kubectl(['delete', 'agentprofile', NAME]);
    }
  });
});
