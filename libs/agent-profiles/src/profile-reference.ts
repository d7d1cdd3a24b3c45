import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { agentProfileSchema } from './profile-schema.js';

/**
 * The AgentProfile reference (docs/agent-profile.md), generated from agentProfileSchema so it
 * cannot drift: one row per field of the spec, down to the Kubernetes shapes the profile copies
 * as they are (a probe, a volume, a label selector), whose own fields are listed in the row.
 * Descriptions come from the schema's `.meta({ description })`, else from FIELD_NOTES below; a
 * field without either, or a note for a field that does not exist, fails the unit test.
 */
export const PROFILE_REFERENCE_FILE = 'docs/agent-profile.md';
/** Examples, one AgentProfile per capability; the reference shows them and a test parses each. */
export const PROFILE_EXAMPLES_DIR = 'docs/agent-profile-examples';

type Schema = {
  readonly type?: string;
  readonly description?: string;
  readonly default?: unknown;
  readonly enum?: readonly unknown[];
  readonly properties?: Readonly<Record<string, Schema>>;
  readonly required?: readonly string[];
  readonly items?: Schema;
  readonly anyOf?: readonly Schema[];
  readonly additionalProperties?: Schema | boolean;
  readonly 'x-kubernetes-int-or-string'?: boolean;
};

/** Fields the profile takes in Kubernetes' own shape: one row each, naming the shape and its fields. */
const KUBERNETES_SHAPES: Readonly<Record<string, string>> = {
  'container.ports': 'ContainerPort',
  'container.securityContext': 'SecurityContext',
  'container.env': 'EnvVar',
  'container.envFrom': 'EnvFromSource',
  'container.volumeMounts': 'VolumeMount',
  'container.livenessProbe': 'Probe',
  'container.readinessProbe': 'Probe',
  'container.startupProbe': 'Probe',
  'container.lifecycle': 'Lifecycle',
  'rbac.rules': 'PolicyRule',
  namespaceSelector: 'LabelSelector',
  'canary.env': 'EnvVar',
  'canary.namespaceSelector': 'LabelSelector',
  volumes: 'Volume',
  imagePullSecrets: 'LocalObjectReference',
};

/** What the schema itself does not describe. */
export const FIELD_NOTES: Readonly<Record<string, string>> = {
  annotationPrefix: 'The prefix of every annotation of this agent: `<prefix>enable: "true"` opts a pod in; parameters, overrides and the other per-pod choices are `<prefix><name>`. Unique among profiles.',
  container: 'The agent container, in the Kubernetes shape; copied into the pod as written, plus the env of `parameters` and `fieldEnv` and the resources of `overrides`.',
  'container.name': 'The agent container\'s name; unique among profiles, and a pod that has a container of this name is refused (a forged agent).',
  'container.image': 'The agent image.',
  'container.imagePullPolicy': 'As in Kubernetes.',
  'container.command': 'As in Kubernetes.',
  'container.args': 'As in Kubernetes.',
  'container.ports': 'The agent\'s ports; probes and hooks may name them.',
  'container.resources': 'Requests and limits (quantities by resource name), as in Kubernetes; `overrides` lets namespaces and pods change some of them within bounds.',
  'container.resources.requests': 'Quantities by resource name, e.g. `cpu: 10m`.',
  'container.resources.limits': 'Quantities by resource name, e.g. `memory: 128Mi`.',
  'container.securityContext': 'Must meet Pod Security restricted unless `dangerouslyAllowPodSecurity` accepts less; fields not listed pass through to Kubernetes.',
  'container.env': 'Static env, or `valueFrom` a Secret or ConfigMap of the pod\'s namespace, a downward-API field or a resource of the agent. Names are unique across `env`, `parameters[].env` and `fieldEnv[].env`.',
  'container.envFrom': 'All keys of a ConfigMap or Secret of the pod\'s namespace as env.',
  'container.volumeMounts': 'Mounts of the profile\'s own `volumes` only; never the API token\'s directory.',
  'container.livenessProbe': 'As in Kubernetes, without `host` (the kubelet would connect from the node to any address).',
  'container.readinessProbe': 'As in Kubernetes, without `host`.',
  'container.startupProbe': 'As in Kubernetes, without `host`; `holdApplicationUntilReady` needs it.',
  'container.lifecycle': '`postStart` and `preStop` hooks (exec, httpGet without `host`, sleep).',
  parameters: 'Annotations a pod sets for its agent, each given to the agent as an env variable.',
  'parameters[].annotation': 'The annotation\'s name after the prefix (`<prefix><annotation>`); `enable`, `status`, `keep-pod-token`, `native-sidecar` and the resource names are reserved.',
  'parameters[].env': 'The env variable the value is given in.',
  'parameters[].required': 'A pod that opts in without it is refused, naming the annotation.',
  'parameters[].default': 'The value when the pod does not set the annotation (not with `required`).',
  'parameters[].pattern': 'A regular expression the whole value must match, in RE2 syntax, that of Kubernetes patterns (no lookarounds or backreferences). The services match it in time linear in the value, so no value can stall them.',
  'parameters[].format': '`url`: the value must be an http(s) URL.',
  'parameters[].containerName': 'The value must name one of the pod\'s containers.',
  fieldEnv: 'Downward-API fields given to the agent as env.',
  'fieldEnv[].env': 'The env variable.',
  'fieldEnv[].fieldPath': 'A downward-API field such as `metadata.name`, `metadata.namespace`, `status.podIP`.',
  nativeSidecar: 'The agent is an init container with `restartPolicy: Always` (a native sidecar) in every pod, not a regular container. Pods that run to completion (Jobs, CronJobs) always get it so.',
  serviceAccountToken: 'Who holds the pod\'s ServiceAccount token.',
  rbac: 'The agent\'s Kubernetes rights: the rbac-syncer keeps a ClusterRole with these rules and binds it to the ServiceAccounts of pods that run the agent, in the namespaces the profile applies in.',
  'rbac.clusterRole':
    'The ClusterRole the syncer writes; the syncer must be granted it by name (`MissingPermissions` on the status until then). A binding cannot change its role, so the API server refuses a new `rbac.clusterRole` while the bindings keep their name: rename `rbac.binding.name` in the same edit (the new bindings are written before the old are emptied). A profile file is not checked so: there, a role changed alone empties each binding, deletes it after `REVOKED_KEEP` (5 min) and writes it anew, and agents hold no RBAC meanwhile.',
  'rbac.binding': 'How the role is bound.',
  'rbac.binding.kind': '`ClusterRoleBinding` (one per namespace, `<name>.<namespace>`, the exec guard keeping exec, attach and port-forward to the agent\'s own pod) or `RoleBinding` (the ClusterRole bound in each namespace).',
  'rbac.binding.name': 'The bindings\' name (default: the ClusterRole\'s).',
  'rbac.rules': 'The role\'s rules; rules that could escalate (reading Secrets, creating workloads, ...) are refused unless named in `dangerouslyAllowEscalation`.',
  'rbac.dangerouslyAllowEscalation': 'The escalations the admin accepts for this profile, by name; each must be needed by some rule.',
  'canary.image': 'The canary agent\'s image.',
  'canary.imagePullPolicy': 'As in Kubernetes.',
  'canary.command': 'Replaces container.command in the canary namespaces.',
  'canary.args': 'Replaces container.args in the canary namespaces.',
  'canary.env': 'Replaces container.env in the canary namespaces.',
  'canary.resources': 'Replaces container.resources in the canary namespaces.',
  'canary.resources.requests': 'Quantities by resource name.',
  'canary.resources.limits': 'Quantities by resource name.',
  'canary.namespaceSelector': 'The namespaces whose new pods get the canary agent.',
  overrides: 'What namespaces and pods may change in the agent, within bounds.',
  'overrides.resources[].resource': 'The resource; the annotation is `<prefix><resource>`, e.g. `xxl-agent/limits.memory`.',
  'overrides.resources[].min': 'The lowest value accepted (a quantity).',
  'overrides.resources[].max': 'The highest value accepted (a quantity).',
  volumes: 'Volumes added to the pod for the agent\'s mounts: emptyDir, configMap, secret, projected; hostPath only with `dangerouslyAllowNodeAccess: [hostPath]`. A pod with a volume of the same name is refused.',
  imagePullSecrets: 'Pull secrets (of the pod\'s namespace) added to the pod, unless it names them already.',
};

export interface ReferenceRow {
  readonly field: string;
  readonly type: string;
  /** "required", a default, or "". */
  readonly presence: string;
  readonly description: string | undefined;
}

/** The spec's fields in schema order, down to the Kubernetes shapes. */
export function referenceRows(): ReferenceRow[] {
  const root = z.toJSONSchema(agentProfileSchema, { io: 'input', reused: 'inline', target: 'openapi-3.0' }) as Schema;
  const rows: ReferenceRow[] = [];
  const visit = (node: Schema, path: string, required: boolean) => {
    const shape = KUBERNETES_SHAPES[path];
    const presence = required ? 'required' : node.default !== undefined ? `default \`${JSON.stringify(node.default)}\`` : '';
    rows.push({ field: path, type: typeOf(node, shape), presence, description: node.description ?? FIELD_NOTES[path] });
    if (shape) return;
    const object = node.type === 'array' ? node.items : node;
    const prefix = node.type === 'array' ? `${path}[]` : path;
    for (const [name, child] of Object.entries(object?.properties ?? {})) visit(child, `${prefix}.${name}`, object?.required?.includes(name) ?? false);
  };
  for (const [name, child] of Object.entries(root.properties ?? {})) {
    // metadata.name is the profile's name; the spec is the rest.
    if (name !== 'name') visit(child, name, root.required?.includes(name) ?? false);
  }
  return rows;
}

function typeOf(node: Schema, shape: string | undefined): string {
  const fields = (n: Schema | undefined) => Object.keys(n?.properties ?? {}).map((f) => `\`${f}\``).join(', ');
  if (shape) {
    const inner = node.type === 'array' ? node.items : node;
    return `${node.type === 'array' ? 'list of ' : ''}Kubernetes ${shape}: ${fields(inner)}`;
  }
  if (node['x-kubernetes-int-or-string']) return 'quantity';
  if (node.enum) return `one of ${node.enum.map((v) => `\`${String(v)}\``).join(', ')}`;
  if (node.type === 'array') {
    const item = node.items ?? {};
    return item.type === 'object' ? 'list of objects' : `list of ${typeOf(item, undefined)}`;
  }
  if (node.type === 'object' && !node.properties && node.additionalProperties) return 'map of quantities';
  return node.type ?? 'any';
}

export interface ProfileExample {
  /** The file name in PROFILE_EXAMPLES_DIR. */
  readonly file: string;
  readonly text: string;
}

/** The example files, in name order, from a checkout at `root`. */
export function readProfileExamples(root: string): ProfileExample[] {
  const dir = join(root, PROFILE_EXAMPLES_DIR);
  return readdirSync(dir)
    .filter((file) => file.endsWith('.yaml'))
    .sort()
    .map((file) => ({ file, text: readFileSync(join(dir, file), 'utf8') }));
}

/** docs/agent-profile.md: the field table, then each example with the comment it opens with as its text. */
export function profileReferenceMarkdown(examples: readonly ProfileExample[]): string {
  // Outside code spans `<prefix>` would read as an HTML tag; `|` would end the cell.
  const cell = (text: string) => text.split(/(`[^`]*`)/).map((part, i) => (i % 2 === 1 ? part : part.replace(/</g, '&lt;').replace(/>/g, '&gt;'))).join('').replace(/\|/g, '\\|');
  const table = referenceRows().map((r) => `| \`${r.field}\` | ${cell(r.type)} | ${r.presence} | ${cell(r.description ?? '')} |`);
  const sections = examples.map(({ file, text }) => {
    const lines = text.split('\n');
    const head = lines.findIndex((l) => !l.startsWith('#'));
    const title = (lines[0] ?? '').replace(/^#\s*/, '');
    const prose = lines.slice(1, head).map((l) => l.replace(/^#\s?/, '')).join(' ').trim();
    const yaml = lines.slice(head).join('\n').trimEnd();
    return [`### ${title}`, '', ...(prose ? [prose, ''] : []), `[\`${PROFILE_EXAMPLES_DIR}/${file}\`](agent-profile-examples/${file})`, '', '```yaml', yaml, '```', ''].join('\n');
  });
  return [
    '<!-- Generated from libs/agent-profiles/src/profile-schema.ts and docs/agent-profile-examples/ by `npm run generate:profile-reference`; do not edit. -->',
    '# AgentProfile reference',
    '',
    '`outrigger.dev/v1alpha1`, kind `AgentProfile`, cluster-scoped; `metadata.name` is the profile\'s name (a DNS label).',
    'The API server checks these fields (the CRD is generated from the same schema) and both services check them again.',
    'Fields in Kubernetes\' own shape are copied into the pod as written; the row lists the fields they take.',
    '',
    '## Fields of `spec`',
    '',
    '| Field | Type | Required / default | Description |',
    '|---|---|---|---|',
    ...table,
    '',
    '## Examples',
    '',
    'Each is a whole AgentProfile: a unit test parses every one with the services\' schema and injects it with the webhook\'s own code, and an e2e test applies every one to the generated CRD on a real API server (`deploy/tests/agent-profile-crd.e2e.ts`).',
    '',
    ...sections,
  ].join('\n');
}
