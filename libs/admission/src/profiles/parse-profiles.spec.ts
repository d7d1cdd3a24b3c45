import { describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { loadTextFixture } from '../testing/fixtures.js';
import { parseProfiles } from './parse-profiles.js';
import { XXL_JOB_PROFILE, XXL_JOB_PROFILE_YAML } from './xxl-job-profile.js';

/** The reference profile file as plain data, to break one field at a time. */
function reference(): { profiles: Record<string, unknown>[] } {
  return YAML.parse(XXL_JOB_PROFILE_YAML) as { profiles: Record<string, unknown>[] };
}

function profile(file: { profiles: Record<string, unknown>[] }, index = 0): Record<string, any> {
  return file.profiles[index] as Record<string, any>;
}

function errorFor(file: unknown): string {
  const result = parseProfiles(typeof file === 'string' ? file : YAML.stringify(file));
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
    const file = reference();
    delete profile(file)['rbac']['binding'];
    const result = parseProfiles(YAML.stringify(file));
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
    const cases: [string, (file: { profiles: Record<string, unknown>[] }) => unknown, string][] = [
      ['bad regex', (f) => (profile(f)['parameters'][1].pattern = '(unclosed'), 'profiles[0] (xxl-job).parameters[1].pattern: invalid regular expression (Unterminated group)'],
      ['prefix without slash', (f) => (profile(f)['annotationPrefix'] = 'xxl-agent'), 'profiles[0] (xxl-job).annotationPrefix: must be a DNS subdomain followed by "/", like xxl-agent/'],
      ['prefix with uppercase', (f) => (profile(f)['annotationPrefix'] = 'XXL/'), 'profiles[0] (xxl-job).annotationPrefix: must be a DNS subdomain followed by "/", like xxl-agent/'],
      ['reserved prefix', (f) => (profile(f)['annotationPrefix'] = 'sidecar.kubernetes.io/'), 'profiles[0] (xxl-job).annotationPrefix: is reserved (Kubernetes prefixes and outrigger.dev/ cannot be used)'],
      ['injector prefix', (f) => (profile(f)['annotationPrefix'] = 'outrigger.dev/'), 'profiles[0] (xxl-job).annotationPrefix: is reserved (Kubernetes prefixes and outrigger.dev/ cannot be used)'],
      ['missing name', (f) => delete profile(f)['name'], 'profiles[0].name: is required'],
      ['bad name', (f) => (profile(f)['name'] = 'XXL_job'), 'profiles[0] (XXL_job).name: must be a DNS label (lowercase letters, digits and "-", at most 63)'],
      ['missing image', (f) => delete profile(f)['container'].image, 'profiles[0] (xxl-job).container.image: is required'],
      ['typo field', (f) => (profile(f)['parameters'][0].requried = true), 'profiles[0] (xxl-job).parameters[0]: unknown field "requried"'],
      ['reserved suffix', (f) => (profile(f)['parameters'][2].annotation = 'status'), 'profiles[0] (xxl-job).parameters[2].annotation: "enable" and "status" are reserved for every profile'],
      ['bad suffix', (f) => (profile(f)['parameters'][2].annotation = 'job/name'), 'profiles[0] (xxl-job).parameters[2].annotation: must be an annotation name (letters, digits, "-", "_", ".", at most 63) without the prefix'],
      ['bad env name', (f) => (profile(f)['parameters'][0].env = 'XXL JOB'), 'profiles[0] (xxl-job).parameters[0].env: must be an environment variable name like MY_VAR'],
      ['unknown format', (f) => (profile(f)['parameters'][0].format = 'email'), 'profiles[0] (xxl-job).parameters[0].format: Invalid input: expected "url"'],
      ['required with default', (f) => (profile(f)['parameters'][2].default = 'x'), 'profiles[0] (xxl-job).parameters[2].default: a required parameter cannot have a default'],
      ['default against pattern', (f) => Object.assign(profile(f)['parameters'][2], { required: false, pattern: '[a-z]+', default: 'UPPER' }), "profiles[0] (xxl-job).parameters[2].default: does not match the parameter's own pattern"],
      ['default not a url', (f) => Object.assign(profile(f)['parameters'][0], { required: false, default: 'xxl:8080' }), 'profiles[0] (xxl-job).parameters[0].default: is not an http(s) URL as the format requires'],
      ['duplicate env', (f) => (profile(f)['fieldEnv'][1].env = 'XXL_JOB_ADDR'), 'profiles[0] (xxl-job).fieldEnv[1].env: duplicate env "XXL_JOB_ADDR"'],
      ['duplicate parameter annotation', (f) => (profile(f)['parameters'][2].annotation = 'job-addr'), 'profiles[0] (xxl-job).parameters[2].annotation: duplicate annotation "job-addr"'],
      ['bad field path', (f) => (profile(f)['fieldEnv'][0].fieldPath = 'spec.containers'), 'profiles[0] (xxl-job).fieldEnv[0].fieldPath: must be a downward API field such as metadata.name, metadata.namespace or status.podIP'],
      ['bad quantity', (f) => (profile(f)['container'].resources.limits.memory = '128MB'), 'profiles[0] (xxl-job).container.resources.limits.memory: must be a Kubernetes quantity like 100m or 64Mi'],
      ['bad port', (f) => (profile(f)['container'].ports[0].containerPort = 70000), 'profiles[0] (xxl-job).container.ports[0].containerPort: Too big: expected number to be <=65535'],
      ['bad port name', (f) => (profile(f)['container'].ports[0].name = 'http-xxl-agent-port'), 'profiles[0] (xxl-job).container.ports[0].name: must be an IANA service name (at most 15 lowercase letters, digits and "-", with a letter)'],
      ['bad pull policy', (f) => (profile(f)['container'].imagePullPolicy = 'Sometimes'), 'profiles[0] (xxl-job).container.imagePullPolicy: Invalid option: expected one of "Always"|"IfNotPresent"|"Never"'],
      ['nativeSidecar not a boolean', (f) => (profile(f)['nativeSidecar'] = 'yes'), 'profiles[0] (xxl-job).nativeSidecar: Invalid input: expected boolean, received string'],
      ['bad binding kind', (f) => (profile(f)['rbac'].binding.kind = 'Binding'), 'profiles[0] (xxl-job).rbac.binding.kind: Invalid option: expected one of "ClusterRoleBinding"|"RoleBinding"'],
      ['no rules', (f) => (profile(f)['rbac'].rules = []), 'profiles[0] (xxl-job).rbac.rules: must list at least one rule'],
      ['non-resource URLs', (f) => (profile(f)['rbac'].rules[0].nonResourceURLs = ['/metrics']), 'profiles[0] (xxl-job).rbac.rules[0]: unknown field "nonResourceURLs"'],
    ];
    it.each(cases)('%s', (_name, breakIt, message) => {
      const file = reference();
      breakIt(file);
      expect(errorFor(file)).toBe(message);
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
      const file = reference();
      profile(file)['rbac'].rules.push(rule);
      expect(errorFor(file)).toBe(`profiles[0] (xxl-job).rbac.rules[2].${message}`);
    });
  });

  describe('rejects duplicates across profiles', () => {
    function twoProfiles(change: (second: Record<string, any>) => void): unknown {
      const file = reference();
      const second = structuredClone(profile(file));
      Object.assign(second, { name: 'second', annotationPrefix: 'second.example.com/' });
      second['container'].name = 'second-agent';
      second['rbac'].clusterRole = 'second-role';
      second['rbac'].binding.name = 'second-role';
      change(second);
      file.profiles.push(second);
      return file;
    }

    it('accepts two distinct profiles', () => {
      expect(parseProfiles(YAML.stringify(twoProfiles(() => undefined))).ok).toBe(true);
    });

    it.each<[string, (second: Record<string, any>) => void, string]>([
      ['name', (s) => (s['name'] = 'xxl-job'), 'profiles[1] (xxl-job).name: duplicate profile name "xxl-job"'],
      ['prefix', (s) => (s['annotationPrefix'] = 'xxl-agent/'), 'profiles[1] (second).annotationPrefix: duplicate annotation prefix "xxl-agent/"'],
      ['container', (s) => (s['container'].name = 'xxl-agent'), 'profiles[1] (second).container.name: duplicate container name "xxl-agent"'],
      ['cluster role', (s) => (s['rbac'].clusterRole = 'xxl-agent-exec'), 'profiles[1] (second).rbac.clusterRole: duplicate ClusterRole "xxl-agent-exec"'],
    ])('%s', (_name, change, message) => {
      expect(errorFor(twoProfiles(change))).toBe(message);
    });
  });

  it('reports every problem, one per line', () => {
    const file = reference();
    profile(file)['parameters'][1].pattern = '(';
    profile(file)['container'].image = '';
    expect(errorFor(file).split('\n')).toEqual([
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
