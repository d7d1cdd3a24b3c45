import { describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { loadTextFixture } from '../testing/fixtures.js';
import { parseProfiles } from './parse-profiles.js';
import { XXL_JOB_PROFILE, XXL_JOB_PROFILE_YAML } from './xxl-job-profile.js';

type Edit = (file: YAML.Document) => void;

/** An edit of the reference file: set a value at a dotted path inside profiles[0]. */
function set(path: string, value: unknown): Edit {
  return (file) => file.setIn(['profiles', 0, ...steps(path)], value);
}

function remove(path: string): Edit {
  return (file) => file.deleteIn(['profiles', 0, ...steps(path)]);
}

function steps(path: string): (string | number)[] {
  return path.split('.').map((step) => (/^\d+$/.test(step) ? Number(step) : step));
}

/** The reference profiles file with some edits applied, as text. */
function referenceWith(...edits: Edit[]): string {
  const file = YAML.parseDocument(XXL_JOB_PROFILE_YAML);
  for (const edit of edits) edit(file);
  return file.toString();
}

function errorFor(text: string): string {
  const result = parseProfiles(text);
  if (result.ok) throw new Error('expected the profiles file to be rejected');
  return result.error;
}

describe('parseProfiles', () => {
  it('parses the reference YAML into exactly the typed constant', () => {
    expect(parseProfiles(XXL_JOB_PROFILE_YAML)).toStrictEqual({ ok: true, value: [XXL_JOB_PROFILE] });
  });

  it('fills defaults and parses a file with two profiles', () => {
    const result = parseProfiles(loadTextFixture('profiles/two-profiles.yaml'));
    if (!result.ok) throw new Error(result.error);
    const [xxl, tracing] = result.value;
    expect(xxl).toStrictEqual(XXL_JOB_PROFILE);
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
    const result = parseProfiles('profiles:\n  - name: minimal\n    annotationPrefix: minimal.example.com/\n    container: { name: minimal, image: busybox }\n');
    expect(result).toStrictEqual({
      ok: true,
      value: [
        {
          name: 'minimal',
          annotationPrefix: 'minimal.example.com/',
          container: { name: 'minimal', image: 'busybox' },
          parameters: [],
          fieldEnv: [],
          nativeSidecar: false,
        },
      ],
    });
  });

  describe('rejects invalid files with a message naming the profile and field', () => {
    const cases: [string, Edit | Edit[], string][] = [
      ['bad regex', set('parameters.1.pattern', '(unclosed'), 'profiles[0] (xxl-job).parameters[1].pattern: invalid regular expression (Unterminated group)'],
      ['prefix without slash', set('annotationPrefix', 'xxl-agent'), 'profiles[0] (xxl-job).annotationPrefix: must be a DNS subdomain followed by "/", like xxl-agent/'],
      ['prefix with uppercase', set('annotationPrefix', 'XXL/'), 'profiles[0] (xxl-job).annotationPrefix: must be a DNS subdomain followed by "/", like xxl-agent/'],
      ['reserved prefix', set('annotationPrefix', 'sidecar.kubernetes.io/'), 'profiles[0] (xxl-job).annotationPrefix: is reserved (Kubernetes prefixes and outrigger.dev/ cannot be used)'],
      ['injector prefix', set('annotationPrefix', 'outrigger.dev/'), 'profiles[0] (xxl-job).annotationPrefix: is reserved (Kubernetes prefixes and outrigger.dev/ cannot be used)'],
      ['missing name', remove('name'), 'profiles[0].name: is required'],
      ['bad name', set('name', 'XXL_job'), 'profiles[0] (XXL_job).name: must be a DNS label (lowercase letters, digits and "-", at most 63)'],
      ['missing image', remove('container.image'), 'profiles[0] (xxl-job).container.image: is required'],
      ['typo field', set('parameters.0.requried', true), 'profiles[0] (xxl-job).parameters[0]: unknown field "requried"'],
      ['reserved suffix', set('parameters.2.annotation', 'status'), 'profiles[0] (xxl-job).parameters[2].annotation: "enable" and "status" are reserved for every profile'],
      ['bad suffix', set('parameters.2.annotation', 'job/name'), 'profiles[0] (xxl-job).parameters[2].annotation: must be an annotation name (letters, digits, "-", "_", ".", at most 63) without the prefix'],
      ['bad env name', set('parameters.0.env', 'XXL JOB'), 'profiles[0] (xxl-job).parameters[0].env: must be an environment variable name like MY_VAR'],
      ['unknown format', set('parameters.0.format', 'email'), 'profiles[0] (xxl-job).parameters[0].format: Invalid input: expected "url"'],
      ['required with default', set('parameters.2.default', 'x'), 'profiles[0] (xxl-job).parameters[2].default: a required parameter cannot have a default'],
      ['default against pattern', [set('parameters.2.required', false), set('parameters.2.pattern', '[a-z]+'), set('parameters.2.default', 'UPPER')], "profiles[0] (xxl-job).parameters[2].default: does not match the parameter's own pattern"],
      ['default not a url', [set('parameters.0.required', false), set('parameters.0.default', 'xxl:8080')], 'profiles[0] (xxl-job).parameters[0].default: is not an http(s) URL as the format requires'],
      ['duplicate env', set('fieldEnv.1.env', 'XXL_JOB_ADDR'), 'profiles[0] (xxl-job).fieldEnv[1].env: duplicate env "XXL_JOB_ADDR"'],
      ['duplicate parameter annotation', set('parameters.2.annotation', 'job-addr'), 'profiles[0] (xxl-job).parameters[2].annotation: duplicate annotation "job-addr"'],
      ['bad field path', set('fieldEnv.0.fieldPath', 'spec.containers'), 'profiles[0] (xxl-job).fieldEnv[0].fieldPath: must be a downward API field such as metadata.name, metadata.namespace or status.podIP'],
      ['bad quantity', set('container.resources.limits.memory', '128MB'), 'profiles[0] (xxl-job).container.resources.limits.memory: must be a Kubernetes quantity like 100m or 64Mi'],
      ['bad port', set('container.ports.0.containerPort', 70000), 'profiles[0] (xxl-job).container.ports[0].containerPort: Too big: expected number to be <=65535'],
      ['bad port name', set('container.ports.0.name', 'http-xxl-agent-port'), 'profiles[0] (xxl-job).container.ports[0].name: must be an IANA service name (at most 15 lowercase letters, digits and "-", with a letter)'],
      ['bad pull policy', set('container.imagePullPolicy', 'Sometimes'), 'profiles[0] (xxl-job).container.imagePullPolicy: Invalid option: expected one of "Always"|"IfNotPresent"|"Never"'],
      ['nativeSidecar not a boolean', set('nativeSidecar', 'yes'), 'profiles[0] (xxl-job).nativeSidecar: Invalid input: expected boolean, received string'],
      ['bad binding kind', set('rbac.binding.kind', 'Binding'), 'profiles[0] (xxl-job).rbac.binding.kind: Invalid option: expected one of "ClusterRoleBinding"|"RoleBinding"'],
      ['no rules', set('rbac.rules', []), 'profiles[0] (xxl-job).rbac.rules: must list at least one rule'],
      ['non-resource URLs', set('rbac.rules.0.nonResourceURLs', ['/metrics']), 'profiles[0] (xxl-job).rbac.rules[0]: unknown field "nonResourceURLs"'],
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
      const text = referenceWith((file) => file.addIn(['profiles', 0, 'rbac', 'rules'], rule));
      expect(errorFor(text)).toBe(`profiles[0] (xxl-job).rbac.rules[1].${message}`);
    });
  });

  describe('rejects duplicates across profiles', () => {
    /** The reference file with a renamed copy of its profile as profiles[1], then `change` applied to that copy. */
    function twoProfiles(change: Record<string, unknown>): string {
      const file = YAML.parseDocument(XXL_JOB_PROFILE_YAML);
      const second = (file.getIn(['profiles', 0]) as YAML.YAMLMap).clone();
      file.addIn(['profiles'], second);
      const renamed: Record<string, unknown> = {
        name: 'second',
        annotationPrefix: 'second.example.com/',
        'container.name': 'second-agent',
        'rbac.clusterRole': 'second-role',
        'rbac.binding.name': 'second-role',
        ...change,
      };
      for (const [path, value] of Object.entries(renamed)) file.setIn(['profiles', 1, ...steps(path)], value);
      return file.toString();
    }

    it('accepts two distinct profiles', () => {
      expect(parseProfiles(twoProfiles({})).ok).toBe(true);
    });

    it.each<[string, Record<string, unknown>, string]>([
      ['name', { name: 'xxl-job' }, 'profiles[1] (xxl-job).name: duplicate profile name "xxl-job"'],
      ['prefix', { annotationPrefix: 'xxl-agent/' }, 'profiles[1] (second).annotationPrefix: duplicate annotation prefix "xxl-agent/"'],
      ['container', { 'container.name': 'xxl-agent' }, 'profiles[1] (second).container.name: duplicate container name "xxl-agent"'],
      ['cluster role', { 'rbac.clusterRole': 'xxl-agent-exec' }, 'profiles[1] (second).rbac.clusterRole: duplicate ClusterRole "xxl-agent-exec"'],
    ])('%s', (_name, change, message) => {
      expect(errorFor(twoProfiles(change))).toBe(message);
    });
  });

  it('reports every problem, one per line', () => {
    const text = referenceWith(set('parameters.1.pattern', '('), set('container.image', ''));
    expect(errorFor(text).split('\n')).toEqual([
      'profiles[0] (xxl-job).container.image: must be a non-empty image reference without spaces',
      'profiles[0] (xxl-job).parameters[1].pattern: invalid regular expression (Unterminated group)',
    ]);
  });

  it.each<[string, string, RegExp]>([
    ['empty file', '', /^profiles file: is empty$/],
    ['comment only', '# nothing\n', /^profiles file: is empty$/],
    ['not YAML', 'profiles: [\n', /^profiles file: is not valid YAML \(.+\)$/],
    ['two documents', `${XXL_JOB_PROFILE_YAML}---\n${XXL_JOB_PROFILE_YAML}`, /^profiles file: is not valid YAML \(.*multiple documents.*\)$/i],
    ['duplicate keys', 'profiles: []\nprofiles: []\n', /^profiles file: is not valid YAML \(.*unique.*\)$/i],
    ['a list at the top', '- name: x\n', /^profiles file: Invalid input: expected object, received array$/],
    ['no profiles', 'profiles: []\n', /^profiles: must list at least one profile$/],
    ['unknown top-level key', 'profile: []\n', /^profiles: is required\nprofiles file: unknown field "profile"$/],
  ])('reports a file that is unusable: %s', (_name, text, message) => {
    expect(errorFor(text)).toMatch(message);
  });
});
