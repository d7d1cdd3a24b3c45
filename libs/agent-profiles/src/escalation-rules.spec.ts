import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { loadTextFixture, RESTRICTED_SECURITY_CONTEXT } from './testing/fixtures.js';
import { ESCALATION_RULES, escalationOptOuts, type EscalationName } from './escalation-rules.js';
import { parseProfiles } from './parse-profiles.js';
import type { AgentProfile } from './profile-schema.js';
import { REFERENCE_PROFILE_FILE, referenceProfile } from './reference-profile.js';

const XXL_JOB_PROFILE = referenceProfile();

type Rule = { apiGroups: string[]; resources: string[]; verbs: string[]; resourceNames?: string[] };

/** A profiles file with one profile whose rbac has `rules` (and `extra` fields such as the opt-out). */
function profileWith(rules: Rule[], extra: Record<string, unknown> = {}, binding: Record<string, unknown> = { kind: 'RoleBinding' }): string {
  return YAML.stringify({
    apiVersion: 'outrigger.dev/v1alpha1',
    kind: 'AgentProfile',
    metadata: { name: 'agent' },
    spec: {
      annotationPrefix: 'agent.example.com/',
      container: { name: 'agent', image: 'registry.example.com/agent:1.0.0', securityContext: RESTRICTED_SECURITY_CONTEXT },
      rbac: { clusterRole: 'agent-role', binding, rules, ...extra },
    },
  });
}

function errorLines(text: string): string[] {
  const result = parseProfiles(text);
  if (result.ok) throw new Error('expected the profiles file to be rejected');
  return result.error.split('\n');
}

function loaded(text: string): AgentProfile {
  const result = parseProfiles(text);
  if (!result.ok) throw new Error(result.error);
  const [profile] = result.value;
  if (!profile) throw new Error('no profile');
  return profile;
}

function reasonOf(name: EscalationName): string {
  const entry = ESCALATION_RULES.find((e) => e.name === name);
  if (!entry) throw new Error(`no entry ${name}`);
  return entry.reason;
}

function refusal(at: string, combination: string, name: EscalationName): string {
  return (
    `AgentProfile agent: spec.rbac.${at}: ${combination} is escalation in practice (${name}): ${reasonOf(name)}; ` +
    `if the agent truly needs it, accept it by name with rbac.dangerouslyAllowEscalation: [${name}]`
  );
}

/**
 * Every refused (API group, resource, verb), written out by hand rather than derived from the
 * table, so that a typo in the table (or here) fails a test instead of hiding.
 */
const REFUSED: [group: string, resource: string, verb: string, entry: EscalationName][] = [
  ['', 'secrets', 'get', 'secrets-read'],
  ['', 'secrets', 'list', 'secrets-read'],
  ['', 'secrets', 'watch', 'secrets-read'],
  ['', 'serviceaccounts/token', 'create', 'token-request'],
  ...(['create', 'update', 'patch'] as const).flatMap((verb) =>
    (
      [
        ['', 'pods'],
        ['', 'pods/ephemeralcontainers'],
        ['', 'replicationcontrollers'],
        ['apps', 'deployments'],
        ['apps', 'replicasets'],
        ['apps', 'statefulsets'],
        ['apps', 'daemonsets'],
        ['batch', 'jobs'],
        ['batch', 'cronjobs'],
      ] as const
    ).map(([group, resource]) => [group, resource, verb, 'workload-creation'] as [string, string, string, EscalationName]),
  ),
  ['', 'persistentvolumes', 'create', 'persistent-volume-creation'],
  // "any verb": the ones the kubelet API maps HTTP methods to, the read verbs, and one made up.
  ...['get', 'create', 'update', 'patch', 'delete', 'list', 'watch', 'deletecollection', 'proxy'].map(
    (verb) => ['', 'nodes/proxy', verb, 'node-proxy'] as [string, string, string, EscalationName],
  ),
  ['', 'nodes', 'update', 'node-modification'],
  ['', 'nodes', 'patch', 'node-modification'],
  ['', 'nodes/status', 'update', 'node-modification'],
  ['', 'nodes/status', 'patch', 'node-modification'],
  ['', 'namespaces', 'update', 'namespace-modification'],
  ['', 'namespaces', 'patch', 'namespace-modification'],
  ['certificates.k8s.io', 'certificatesigningrequests/approval', 'update', 'csr-approval'],
  ['certificates.k8s.io', 'certificatesigningrequests/approval', 'patch', 'csr-approval'],
  ['certificates.k8s.io', 'signers', 'approve', 'certificate-signing'],
  ['certificates.k8s.io', 'signers', 'sign', 'certificate-signing'],
  ...(['create', 'update', 'patch', 'delete', 'deletecollection'] as const).flatMap((verb) =>
    [
      'mutatingwebhookconfigurations',
      'validatingwebhookconfigurations',
      'validatingadmissionpolicies',
      'validatingadmissionpolicybindings',
      'mutatingadmissionpolicies',
      'mutatingadmissionpolicybindings',
    ].map((resource) => ['admissionregistration.k8s.io', resource, verb, 'admission-control'] as [string, string, string, EscalationName]),
  ),
  ...(['create', 'update', 'patch'] as const).flatMap((verb) =>
    ['clusterroles', 'roles', 'clusterrolebindings', 'rolebindings'].map(
      (resource) => ['rbac.authorization.k8s.io', resource, verb, 'rbac-modification'] as [string, string, string, EscalationName],
    ),
  ),
  ['apiregistration.k8s.io', 'apiservices', 'create', 'api-service-registration'],
  ['apiregistration.k8s.io', 'apiservices', 'update', 'api-service-registration'],
  ['apiregistration.k8s.io', 'apiservices', 'patch', 'api-service-registration'],
];

function groupLabel(group: string): string {
  return group === '' ? 'core group ""' : `group "${group}"`;
}

describe('ESCALATION_RULES', () => {
  it('is exactly the hand-written list of refused combinations (every fixed verb of every entry)', () => {
    const fromTable = ESCALATION_RULES.flatMap((entry) =>
      Object.entries(entry.resources as Record<string, readonly string[]>).flatMap(([group, resources]) =>
        resources.flatMap((resource) =>
          entry.verbs === 'any' ? [`${group}|${resource}|any|${entry.name}`] : entry.verbs.map((verb) => `${group}|${resource}|${verb}|${entry.name}`),
        ),
      ),
    );
    const handWritten = REFUSED.map(([group, resource, verb, name]) => `${group}|${resource}|${name === 'node-proxy' ? 'any' : verb}|${name}`);
    expect([...new Set(handWritten)].sort()).toEqual([...fromTable].sort());
  });

  it('has unique names and a one-line reason citing its source for each entry', () => {
    expect(new Set(ESCALATION_RULES.map((e) => e.name)).size).toBe(ESCALATION_RULES.length);
    for (const entry of ESCALATION_RULES) {
      expect(entry.reason).not.toContain('\n');
      expect(entry.reason).toMatch(/\((Kubernetes RBAC good practices|not on the good-practices page)[^)]*\)$/);
    }
  });
});

describe('profiles refuse RBAC that is escalation in practice', () => {
  it.each(REFUSED)('refuses %j %s %s (%s) without the opt-out, and loads it with the opt-out', (group, resource, verb, name) => {
    const rule = { apiGroups: [group], resources: [resource], verbs: [verb] };
    expect(errorLines(profileWith([rule]))).toEqual([refusal('rules[0].verbs[0]', `"${verb}" on "${resource}" (${groupLabel(group)})`, name)]);

    const profile = loaded(profileWith([rule], { dangerouslyAllowEscalation: [name] }));
    expect(profile.rbac?.dangerouslyAllowEscalation).toEqual([name]);
    expect(escalationOptOuts(profile)).toEqual([
      `profile agent: rbac.dangerouslyAllowEscalation accepts ${name} for rbac.rules[0] ("${verb}" on "${resource}" (${groupLabel(group)})), ` +
        `granted to every opted-in ServiceAccount in its own namespace (RoleBinding): ${reasonOf(name)}`,
    ]);
  });

  it('still refuses with resourceNames: a name does not make a Secret or a node safe', () => {
    const rule = { apiGroups: [''], resources: ['secrets'], resourceNames: ['app-config'], verbs: ['get'] };
    expect(errorLines(profileWith([rule]))).toEqual([refusal('rules[0].verbs[0]', '"get" on "secrets" (core group "")', 'secrets-read')]);
  });

  it('checks every (group, resource, verb) of a rule and reports each entry once, at its first verb', () => {
    const rule = { apiGroups: ['', 'apps'], resources: ['configmaps', 'pods', 'secrets', 'deployments'], verbs: ['get', 'list', 'create', 'delete'] };
    expect(errorLines(profileWith([{ apiGroups: [''], resources: ['pods/exec'], verbs: ['create'] }, rule]))).toEqual([
      refusal('rules[1].verbs[0]', '"get", "list" on "secrets" (core group "")', 'secrets-read'),
      refusal('rules[1].verbs[2]', '"create" on "pods" (core group ""), "deployments" (group "apps")', 'workload-creation'),
    ]);
  });

  it('tells the core group "" from named groups that happen to have a resource of the same name', () => {
    const harmless = [
      { apiGroups: ['example.com'], resources: ['secrets'], verbs: ['get', 'list'] },
      { apiGroups: ['apps'], resources: ['pods', 'nodes/proxy'], verbs: ['create'] },
      { apiGroups: ['metrics.k8s.io'], resources: ['nodes', 'pods'], verbs: ['get', 'list'] },
      { apiGroups: [''], resources: ['deployments', 'clusterroles'], verbs: ['create'] },
    ];
    expect(parseProfiles(profileWith(harmless)).ok).toBe(true);
    expect(errorLines(profileWith([{ apiGroups: ['example.com', ''], resources: ['secrets'], verbs: ['get'] }]))).toEqual([
      refusal('rules[0].verbs[0]', '"get" on "secrets" (core group "")', 'secrets-read'),
    ]);
  });

  it('refuses a name in a case Kubernetes never matches, and still sees the escalation behind it', () => {
    expect(errorLines(profileWith([{ apiGroups: [''], resources: ['Secrets'], verbs: ['GET'] }]))).toEqual([
      'AgentProfile agent: spec.rbac.rules[0].resources[0]: "Secrets" matches nothing: Kubernetes compares RBAC names exactly and they are lowercase; write "secrets"',
      'AgentProfile agent: spec.rbac.rules[0].verbs[0]: "GET" matches nothing: Kubernetes compares RBAC names exactly and they are lowercase; write "get"',
      refusal('rules[0].verbs[0]', '"GET" on "Secrets" (core group "")', 'secrets-read'),
    ]);
    expect(errorLines(profileWith([{ apiGroups: ['Apps'], resources: ['deployments'], verbs: ['get'] }]))).toEqual([
      'AgentProfile agent: spec.rbac.rules[0].apiGroups[0]: "Apps" matches nothing: Kubernetes compares RBAC names exactly and they are lowercase; write "apps"',
    ]);
  });

  it.each<[string, Rule]>([
    ['pods get/list/watch', { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list', 'watch'] }],
    ['pods/exec create/get (the reference profile)', { apiGroups: [''], resources: ['pods/exec'], verbs: ['create', 'get'] }],
    ['pods/log get', { apiGroups: [''], resources: ['pods/log'], verbs: ['get'] }],
    ['configmaps get', { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'watch'] }],
    ['events create', { apiGroups: ['', 'events.k8s.io'], resources: ['events'], verbs: ['create', 'patch'] }],
    ['leases', { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'create', 'update'] }],
    ['reading workloads', { apiGroups: ['apps', 'batch'], resources: ['deployments', 'jobs'], verbs: ['get', 'list', 'watch'] }],
    ['scaling', { apiGroups: ['apps'], resources: ['deployments/scale'], verbs: ['get', 'update', 'patch'] }],
    ['deleting pods', { apiGroups: [''], resources: ['pods'], verbs: ['delete'] }],
    ['reading nodes and namespaces', { apiGroups: [''], resources: ['nodes', 'namespaces'], verbs: ['get', 'list', 'watch'] }],
    ['secrets create', { apiGroups: [''], resources: ['secrets'], verbs: ['create'] }],
    ['a CSR of its own', { apiGroups: ['certificates.k8s.io'], resources: ['certificatesigningrequests'], verbs: ['create', 'get'] }],
    ['reading RBAC', { apiGroups: ['rbac.authorization.k8s.io'], resources: ['roles', 'rolebindings'], verbs: ['get', 'list'] }],
  ])('loads a harmless rule: %s', (_name, rule) => {
    const profile = loaded(profileWith([rule]));
    expect(profile.rbac).not.toHaveProperty('dangerouslyAllowEscalation');
    expect(escalationOptOuts(profile)).toEqual([]);
  });
});

describe('rbac.dangerouslyAllowEscalation', () => {
  const secretsAndPods = [
    { apiGroups: [''], resources: ['secrets'], verbs: ['get'] },
    { apiGroups: [''], resources: ['pods'], verbs: ['create'] },
  ];

  it('accepts only the entries it names', () => {
    expect(errorLines(profileWith(secretsAndPods, { dangerouslyAllowEscalation: ['secrets-read'] }))).toEqual([
      refusal('rules[1].verbs[0]', '"create" on "pods" (core group "")', 'workload-creation'),
    ]);
  });

  it('refuses a name that is not in the table', () => {
    const lines = errorLines(profileWith(secretsAndPods, { dangerouslyAllowEscalation: ['secrets-read', 'everything'] }));
    expect(lines[0]).toMatch(/^AgentProfile agent: spec\.rbac\.dangerouslyAllowEscalation\[1\]: Invalid option: expected one of "secrets-read"\|"token-request"\|/);
  });

  it('refuses a name that no rule needs, so it cannot cover a rule added later', () => {
    expect(errorLines(profileWith([secretsAndPods[0] as Rule], { dangerouslyAllowEscalation: ['secrets-read', 'node-proxy'] }))).toEqual([
      'AgentProfile agent: spec.rbac.dangerouslyAllowEscalation[1]: "node-proxy" is accepted but no rule needs it: remove it, so that it cannot cover a rule added later',
    ]);
  });

  it('loads a real-shaped profile that accepts two entries, and reports each accepted rule for the logs', () => {
    const profile = loaded(loadTextFixture('profiles/escalation-accepted.yaml'));
    expect(profile.rbac).toMatchObject({ binding: { kind: 'RoleBinding', name: 'ci-runner-builds' }, dangerouslyAllowEscalation: ['workload-creation', 'secrets-read'] });
    expect(escalationOptOuts(profile)).toEqual([
      `profile ci-runner: rbac.dangerouslyAllowEscalation accepts workload-creation for rbac.rules[1] ("create" on "pods" (core group "")), granted to every opted-in ServiceAccount in its own namespace (RoleBinding): ${reasonOf('workload-creation')}`,
      `profile ci-runner: rbac.dangerouslyAllowEscalation accepts secrets-read for rbac.rules[2] ("get" on "secrets" (core group "")), granted to every opted-in ServiceAccount in its own namespace (RoleBinding): ${reasonOf('secrets-read')}`,
    ]);
  });

  it('refuses the same profile without the opt-out, naming the path, the combination, the reason and the way out', () => {
    const file = YAML.parseDocument(loadTextFixture('profiles/escalation-accepted.yaml'));
    file.deleteIn(['spec', 'rbac', 'dangerouslyAllowEscalation']);
    expect(parseProfiles(file.toString())).toStrictEqual({
      ok: false,
      error: [
        `AgentProfile ci-runner: spec.rbac.rules[1].verbs[0]: "create" on "pods" (core group "") is escalation in practice (workload-creation): ${reasonOf('workload-creation')}; if the agent truly needs it, accept it by name with rbac.dangerouslyAllowEscalation: [workload-creation]`,
        `AgentProfile ci-runner: spec.rbac.rules[2].verbs[0]: "get" on "secrets" (core group "") is escalation in practice (secrets-read): ${reasonOf('secrets-read')}; if the agent truly needs it, accept it by name with rbac.dangerouslyAllowEscalation: [secrets-read]`,
      ].join('\n'),
    });
  });

  it('says when the grant reaches every namespace', () => {
    const profile = loaded(profileWith([secretsAndPods[0] as Rule], { dangerouslyAllowEscalation: ['secrets-read'] }, { kind: 'ClusterRoleBinding' }));
    expect(escalationOptOuts(profile)).toEqual([
      `profile agent: rbac.dangerouslyAllowEscalation accepts secrets-read for rbac.rules[0] ("get" on "secrets" (core group "")), granted to every opted-in ServiceAccount in every namespace (ClusterRoleBinding): ${reasonOf('secrets-read')}`,
    ]);
  });

  it('is not needed by the reference profile, which loads as before', () => {
    expect(escalationOptOuts(XXL_JOB_PROFILE)).toEqual([]);
    const both = parseProfiles([readFileSync(REFERENCE_PROFILE_FILE, 'utf8'), loadTextFixture('profiles/tracing.yaml')].join('\n---\n'));
    expect(both.ok && both.value.flatMap(escalationOptOuts)).toEqual([]);
  });
});
