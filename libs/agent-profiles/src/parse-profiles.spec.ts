import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { loadTextFixture, RESTRICTED_SECURITY_CONTEXT } from './testing/fixtures.js';
import { agentProfileObject } from './agent-profile-object.js';
import { convertProfilesFile, parseProfiles } from './parse-profiles.js';
import { REFERENCE_PROFILE_FILE, referenceProfile } from './reference-profile.js';

const XXL_JOB_PROFILE = referenceProfile();
const REFERENCE_YAML = readFileSync(REFERENCE_PROFILE_FILE, 'utf8');
/** Two profiles in one file: the reference profile (its one copy) and the tracing fixture. */
const REFERENCE_AND_TRACING = [REFERENCE_YAML, loadTextFixture('profiles/tracing.yaml')].join('\n---\n');

type Edit = (file: YAML.Document) => void;

/** An edit of the reference AgentProfile: set a value at a dotted path of its spec ("name" is metadata.name). */
function set(path: string, value: unknown): Edit {
  return (file) => file.setIn(steps(path), value);
}

function remove(path: string): Edit {
  return (file) => file.deleteIn(steps(path));
}

function steps(path: string): (string | number)[] {
  if (path === 'name') return ['metadata', 'name'];
  return ['spec', ...path.split('.').map((step) => (/^\d+$/.test(step) ? Number(step) : step))];
}

/** The reference profile file with some edits applied, as text. */
function referenceWith(...edits: Edit[]): string {
  const file = YAML.parseDocument(REFERENCE_YAML);
  for (const edit of edits) edit(file);
  return file.toString();
}

function errorFor(text: string): string {
  const result = parseProfiles(text);
  if (result.ok) throw new Error('expected the profiles file to be rejected');
  return result.error;
}

describe('parseProfiles', () => {
  it('reads back what agentProfileObject writes', () => {
    expect(parseProfiles(YAML.stringify(agentProfileObject(XXL_JOB_PROFILE)))).toStrictEqual({ ok: true, value: [XXL_JOB_PROFILE] });
  });

  it('reads a List, as kubectl get -o yaml prints it', () => {
    const list = { apiVersion: 'v1', kind: 'List', items: [agentProfileObject(XXL_JOB_PROFILE)] };
    expect(parseProfiles(YAML.stringify(list))).toStrictEqual({ ok: true, value: [XXL_JOB_PROFILE] });
  });

  it('fills defaults and parses a file with two profiles', () => {
    const result = parseProfiles(REFERENCE_AND_TRACING);
    if (!result.ok) throw new Error(result.error);
    const [xxl, tracing] = result.value;
    expect(xxl).toStrictEqual(XXL_JOB_PROFILE);
    expect(xxl?.serviceAccountToken).toEqual({ agentOnly: true, podMayKeepToken: false });
    expect(tracing).toMatchObject({
      name: 'tracing',
      nativeSidecar: true,
      rbac: { clusterRole: 'trace-agent-read', binding: { kind: 'RoleBinding', name: 'trace-agent-read' } },
      parameters: [
        { annotation: 'collector', required: false, containerName: false, default: 'http://otel-collector.observability:4317' },
        { annotation: 'sample-rate', required: false, pattern: '0(\\.[0-9]+)?|1(\\.0+)?', default: '0.1' },
      ],
    });
  });

  it('defaults the binding to a ClusterRoleBinding named after the role', () => {
    const result = parseProfiles(referenceWith(remove('rbac.binding')));
    expect(result.ok && result.value[0]?.rbac?.binding).toEqual({ kind: 'ClusterRoleBinding', name: 'xxl-agent-exec' });
  });

  it('accepts a profile without RBAC, parameters or field env', () => {
    const container = { name: 'minimal', image: 'busybox', securityContext: RESTRICTED_SECURITY_CONTEXT };
    const result = parseProfiles(YAML.stringify({ apiVersion: 'outrigger.dev/v1alpha1', kind: 'AgentProfile', metadata: { name: 'minimal' }, spec: { annotationPrefix: 'minimal.example.com/', container } }));
    expect(result).toStrictEqual({
      ok: true,
      value: [
        {
          name: 'minimal',
          annotationPrefix: 'minimal.example.com/',
          container,
          parameters: [],
          fieldEnv: [],
          nativeSidecar: false,
        },
      ],
    });
  });

  describe('rejects invalid files with a message naming the profile and field', () => {
    const cases: [string, Edit | Edit[], string][] = [
      ['bad regex', set('parameters.1.pattern', '(unclosed'), 'AgentProfile xxl-job: spec.parameters[1].pattern: is not an RE2 regular expression (the syntax of Kubernetes patterns): missing closing ): `(unclosed`'],
      ['prefix without slash', set('annotationPrefix', 'xxl-agent'), 'AgentProfile xxl-job: spec.annotationPrefix: must be a DNS subdomain followed by "/", like xxl-agent/'],
      ['prefix with uppercase', set('annotationPrefix', 'XXL/'), 'AgentProfile xxl-job: spec.annotationPrefix: must be a DNS subdomain followed by "/", like xxl-agent/'],
      ['reserved prefix', set('annotationPrefix', 'sidecar.kubernetes.io/'), 'AgentProfile xxl-job: spec.annotationPrefix: is reserved (Kubernetes prefixes and outrigger.dev/ cannot be used)'],
      ['injector prefix', set('annotationPrefix', 'outrigger.dev/'), 'AgentProfile xxl-job: spec.annotationPrefix: is reserved (Kubernetes prefixes and outrigger.dev/ cannot be used)'],
      ['missing name', remove('name'), 'document: metadata.name: is required'],
      ['bad name', set('name', 'XXL_job'), 'AgentProfile XXL_job: metadata.name: must be a DNS label (lowercase letters, digits and "-", at most 63)'],
      ['missing image', remove('container.image'), 'AgentProfile xxl-job: spec.container.image: is required'],
      ['typo field', set('parameters.0.requried', true), 'AgentProfile xxl-job: spec.parameters[0]: unknown field "requried"'],
      ['reserved suffix', set('parameters.2.annotation', 'status'), 'AgentProfile xxl-job: spec.parameters[2].annotation: "enable", "status", "keep-pod-token", "native-sidecar", "requests.cpu", "requests.memory", "limits.cpu", "limits.memory" are reserved for every profile'],
      ['pod may keep its token without agentOnly', set('serviceAccountToken', { podMayKeepToken: true }), "AgentProfile xxl-job: spec.serviceAccountToken.podMayKeepToken: only means something with agentOnly: true (without it every container keeps the pod's token)"],
      ['agent below restricted', set('container.securityContext.allowPrivilegeEscalation', true), 'AgentProfile xxl-job: spec.container.securityContext.allowPrivilegeEscalation: must be false (Pod Security restricted; only spec.dangerouslyAllowPodSecurity: baseline accepts less)'],
      ['bad suffix', set('parameters.2.annotation', 'job/name'), 'AgentProfile xxl-job: spec.parameters[2].annotation: must be an annotation name (letters, digits, "-", "_", ".", at most 63) without the prefix'],
      ['bad env name', set('parameters.0.env', 'XXL JOB'), 'AgentProfile xxl-job: spec.parameters[0].env: must be an environment variable name like MY_VAR'],
      ['unknown format', set('parameters.0.format', 'email'), 'AgentProfile xxl-job: spec.parameters[0].format: Invalid input: expected "url"'],
      ['required with default', set('parameters.2.default', 'x'), 'AgentProfile xxl-job: spec.parameters[2].default: a required parameter cannot have a default'],
      ['default against pattern', [set('parameters.2.required', false), set('parameters.2.pattern', '[a-z]+'), set('parameters.2.default', 'UPPER')], "AgentProfile xxl-job: spec.parameters[2].default: does not match the parameter's own pattern"],
      ['default not a url', [set('parameters.0.required', false), set('parameters.0.default', 'xxl:8080')], 'AgentProfile xxl-job: spec.parameters[0].default: is not an http(s) URL as the format requires'],
      ['duplicate env', set('fieldEnv.1.env', 'XXL_JOB_ADDR'), 'AgentProfile xxl-job: spec.fieldEnv[1].env: duplicate env "XXL_JOB_ADDR"'],
      ['duplicate parameter annotation', set('parameters.2.annotation', 'job-addr'), 'AgentProfile xxl-job: spec.parameters[2].annotation: duplicate annotation "job-addr"'],
      ['bad field path', set('fieldEnv.0.fieldPath', 'spec.containers'), 'AgentProfile xxl-job: spec.fieldEnv[0].fieldPath: must be a downward API field such as metadata.name, metadata.namespace or status.podIP'],
      ['bad quantity', set('container.resources.limits.memory', '128MB'), 'AgentProfile xxl-job: spec.container.resources.limits.memory: must be a Kubernetes quantity like 100m or 64Mi'],
      ['bad port', set('container.ports.0.containerPort', 70000), 'AgentProfile xxl-job: spec.container.ports[0].containerPort: Too big: expected number to be <=65535'],
      [
        'bad port name (the probes name the port too)',
        set('container.ports.0.name', 'http-xxl-agent-port'),
        [
          'AgentProfile xxl-job: spec.container.ports[0].name: must be an IANA service name (at most 15 lowercase letters, digits and "-", with a letter)',
          'AgentProfile xxl-job: spec.container.livenessProbe.httpGet.port: names no port of the container (ports[].name)',
          'AgentProfile xxl-job: spec.container.readinessProbe.httpGet.port: names no port of the container (ports[].name)',
        ].join('\n'),
      ],
      ['bad pull policy', set('container.imagePullPolicy', 'Sometimes'), 'AgentProfile xxl-job: spec.container.imagePullPolicy: Invalid option: expected one of "Always"|"IfNotPresent"|"Never"'],
      ['nativeSidecar not a boolean', set('nativeSidecar', 'yes'), 'AgentProfile xxl-job: spec.nativeSidecar: Invalid input: expected boolean, received string'],
      ['bad binding kind', set('rbac.binding.kind', 'Binding'), 'AgentProfile xxl-job: spec.rbac.binding.kind: Invalid option: expected one of "ClusterRoleBinding"|"RoleBinding"'],
      ['no rules', set('rbac.rules', []), 'AgentProfile xxl-job: spec.rbac.rules: must list at least one rule'],
      ['non-resource URLs', set('rbac.rules.0.nonResourceURLs', ['/metrics']), 'AgentProfile xxl-job: spec.rbac.rules[0]: unknown field "nonResourceURLs"'],
    ];
    it.each(cases)('%s', (_name, edits, message) => {
      expect(errorFor(referenceWith(...[edits].flat()))).toBe(message);
    });
  });

  describe('refuses RBAC that grants more than an admin opted into', () => {
    const why = 'creating a pod must never grant more than an admin opted into';
    it.each<[string, Record<string, unknown>, string]>([
      ['wildcard verb', { apiGroups: [''], resources: ['pods'], verbs: ['*'] }, `verbs[0]: wildcard "*" is not allowed: ${why}; list each verb explicitly`],
      ['wildcard resource', { apiGroups: [''], resources: ['pods/*'], verbs: ['get'] }, `resources[0]: wildcard "pods/*" is not allowed: ${why}; list each resource explicitly`],
      ['wildcard group', { apiGroups: ['*'], resources: ['pods'], verbs: ['get'] }, `apiGroups[0]: wildcard "*" is not allowed: ${why}; list each API group explicitly`],
      ['escalate', { apiGroups: ['rbac.authorization.k8s.io'], resources: ['clusterroles'], verbs: ['get', 'escalate'] }, `verbs[1]: verb "escalate" is not allowed: it lets the agent grant or assume permissions, and ${why}`],
      ['bind', { apiGroups: ['rbac.authorization.k8s.io'], resources: ['clusterroles'], verbs: ['bind'] }, `verbs[0]: verb "bind" is not allowed: it lets the agent grant or assume permissions, and ${why}`],
      ['impersonate', { apiGroups: [''], resources: ['serviceaccounts'], verbs: ['impersonate'] }, `verbs[0]: verb "impersonate" is not allowed: it lets the agent grant or assume permissions, and ${why}`],
    ])('%s', (_name, rule, message) => {
      const text = referenceWith((file) => file.addIn(['spec', 'rbac', 'rules'], rule));
      expect(errorFor(text)).toBe(`AgentProfile xxl-job: spec.rbac.rules[1].${message}`);
    });
  });

  describe('rejects conflicts between profiles', () => {
    /** The reference document, then a renamed copy of it as a second document with `change` applied. */
    function twoProfiles(change: Record<string, unknown>): string {
      const second = YAML.parseDocument(REFERENCE_YAML);
      const renamed: Record<string, unknown> = {
        name: 'second',
        annotationPrefix: 'second.example.com/',
        'container.name': 'second-agent',
        'rbac.clusterRole': 'second-role',
        'rbac.binding.name': 'second-role',
        ...change,
      };
      for (const [path, value] of Object.entries(renamed)) second.setIn(steps(path), value);
      return `${REFERENCE_YAML}---\n${second.toString()}`;
    }

    it('accepts two distinct profiles', () => {
      expect(parseProfiles(twoProfiles({})).ok).toBe(true);
    });

    it.each<[string, Record<string, unknown>, string]>([
      ['name', { name: 'xxl-job' }, 'AgentProfile xxl-job: metadata.name "xxl-job" is already used by AgentProfile xxl-job'],
      ['prefix', { annotationPrefix: 'xxl-agent/' }, 'AgentProfile second: spec.annotationPrefix "xxl-agent/" is already used by AgentProfile xxl-job'],
      ['container', { 'container.name': 'xxl-agent' }, 'AgentProfile second: spec.container.name "xxl-agent" is already used by AgentProfile xxl-job'],
      ['cluster role', { 'rbac.clusterRole': 'xxl-agent-exec' }, 'AgentProfile second: spec.rbac.clusterRole "xxl-agent-exec" is already used by AgentProfile xxl-job'],
    ])('%s', (_name, change, message) => {
      expect(errorFor(twoProfiles(change))).toBe(message);
    });
  });

  it('reports every problem, one per line', () => {
    const text = referenceWith(set('parameters.1.pattern', '('), set('container.image', ''));
    expect(errorFor(text).split('\n')).toEqual([
      'AgentProfile xxl-job: spec.container.image: must be a non-empty image reference without spaces',
      'AgentProfile xxl-job: spec.parameters[1].pattern: is not an RE2 regular expression (the syntax of Kubernetes patterns): missing closing ): `(`',
    ]);
  });

  it.each<[string, string, RegExp]>([
    ['empty file', '', /^holds no AgentProfile$/],
    ['comment only', '# nothing\n', /^holds no AgentProfile$/],
    ['not YAML', 'spec: [\n', /^document: is not valid YAML \(.+\)$/],
    ['duplicate keys', 'kind: AgentProfile\nkind: AgentProfile\n', /^document: is not valid YAML \(.*unique.*\)$/i],
    ['another kind', 'apiVersion: v1\nkind: ConfigMap\n', /^document: must be apiVersion outrigger.dev\/v1alpha1, kind AgentProfile$/],
    ['a list at the top', '- name: x\n', /^document: must be apiVersion outrigger.dev\/v1alpha1, kind AgentProfile$/],
    ['no spec', 'apiVersion: outrigger.dev/v1alpha1\nkind: AgentProfile\nmetadata: { name: x }\n', /^AgentProfile x: spec: is required$/],
    ['the former format', loadTextFixture('profiles/legacy/tracing.yaml'), /^document: the "profiles:" list format was replaced by AgentProfile objects; convert it with: npm run -s convert-profiles -- <file> > profiles.yaml$/],
  ])('reports a file that is unusable: %s', (_name, text, message) => {
    expect(errorFor(text)).toMatch(message);
  });
});

describe('convertProfilesFile', () => {
  it('turns the former profiles: list into an AgentProfile document that parses to the same profile', () => {
    const converted = convertProfilesFile(loadTextFixture('profiles/legacy/tracing.yaml'));
    if (!converted.ok) throw new Error(converted.error);
    expect(parseProfiles(converted.value)).toStrictEqual(parseProfiles(loadTextFixture('profiles/tracing.yaml')));
  });

  it('turns a list of several into as many documents, in order', () => {
    // The reference profile as the former list held it (its spec plus the name), then the tracing one.
    const reference = YAML.parse(REFERENCE_YAML) as { metadata: { name: string }; spec: Record<string, unknown> };
    const legacy = YAML.parse(loadTextFixture('profiles/legacy/tracing.yaml')) as { profiles: unknown[] };
    const converted = convertProfilesFile(YAML.stringify({ profiles: [{ name: reference.metadata.name, ...reference.spec }, ...legacy.profiles] }));
    if (!converted.ok) throw new Error(converted.error);
    expect(parseProfiles(converted.value)).toStrictEqual(parseProfiles(REFERENCE_AND_TRACING));
  });

  it('names the problem in a bad former file', () => {
    expect(convertProfilesFile('profiles:\n  - name: Bad\n')).toMatchObject({ ok: false, error: expect.stringMatching(/^profiles\[0\] \(Bad\)\.name: /) });
  });
});
