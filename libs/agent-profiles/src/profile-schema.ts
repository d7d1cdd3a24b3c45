import { z } from 'zod';
import { DNS_LABEL_MAX, DNS_SUBDOMAIN, DNS_SUBDOMAIN_MAX, ENV_FIELD_PATH, ENV_VAR_NAME, INJECT_ANNOTATION, isAnnotationPrefix, isDnsSubdomain, isQualifiedNamePart, PORT_NAME, PORT_NAME_MAX, QUALIFIED_NAME_PART, QUALIFIED_NAME_PART_MAX, QUANTITY } from '@outrigger/admission';
import { envFromSchema, envVarSchema, imagePullSecretsSchema, lifecycleSchema, NODE_ACCESS_OPT_OUT_FIELD, nodeAccessOptOutSchema, readinessProbeSchema, restartingProbeSchema, volumeMountSchema, volumesSchema } from './container-spec-schema.js';
import { labelSelectorSchema } from './label-selector.js';
import { dnsLabel, dnsSubdomain } from './name-schemas.js';
import { celRule, listMap, LIST_MAX, NAME_MAX, STRING_MAX } from './crd-meta.js';
import { ESCALATION_NAMES, ESCALATION_OPT_OUT_FIELD, escalationCelRules, refuseEscalations } from './escalation-rules.js';
import { compileParameterPattern, isHttpUrl, type ParameterPattern } from './parameter-checks.js';
import { OVERRIDABLE_RESOURCES, overridesSchema } from './resource-overrides.js';
import { POD_SECURITY_OPT_OUT_FIELD, podSecurityCelRules, refuseBelowPodSecurityFloor } from './pod-security.js';
import { policyRuleSchema } from './rbac-rule-schema.js';

/** A binding's name leaves room for "." and a namespace (a DNS label) within a DNS subdomain. */
const BINDING_NAME_MAX = DNS_SUBDOMAIN_MAX - 1 - DNS_LABEL_MAX;
const BINDING_NAME_DEFAULT_TOO_LONG = `names the binding too (binding.name is unset) and is longer than ${BINDING_NAME_MAX} characters: set binding.name`;

const MOUNT_WITHOUT_VOLUME = 'every volumeMounts[].name must name one of the profile\'s volumes';
const HOST_PATH_REFUSED = `a hostPath volume gives the agent the node's filesystem: only spec.${NODE_ACCESS_OPT_OUT_FIELD}: [hostPath] accepts it`;
const NAMED_PORT_MISSING = 'names no port of the container (ports[].name)';

/** Annotation suffixes every profile has; parameters cannot take them. */
export const ENABLE_SUFFIX = 'enable';
export const STATUS_SUFFIX = 'status';
/** `<prefix>keep-pod-token: "true"`: the pod keeps its own API token where the profile allows it. */
export const KEEP_POD_TOKEN_SUFFIX = 'keep-pod-token';
/** `<prefix>native-sidecar: "true"|"false"`: the pod chooses how its agent runs, where the profile allows it. */
export const NATIVE_SIDECAR_SUFFIX = 'native-sidecar';
const RESERVED_SUFFIXES = [ENABLE_SUFFIX, STATUS_SUFFIX, KEEP_POD_TOKEN_SUFFIX, NATIVE_SIDECAR_SUFFIX, ...OVERRIDABLE_RESOURCES];
const HOLD_NEEDS_STARTUP_PROBE = 'needs container.startupProbe: the application starts once that probe succeeds';
const HOLD_AND_CHOICE = 'cannot be combined with podMayChooseNativeSidecar (an agent the application waits for is always a native sidecar)';
const POD_MAY_KEEP_TOKEN_ALONE = 'only means something with agentOnly: true (without it every container keeps the pod\'s token)';
const RESERVED_SUFFIXES_TAKEN = `${RESERVED_SUFFIXES.map((s) => `"${s}"`).join(', ')} are reserved for every profile`;

/** Prefixes that belong to Kubernetes itself or to the injector. */
const RESERVED_PREFIX = /(^|\.)(kubernetes\.io|k8s\.io)\/$|^outrigger\.dev\/$/;

// Each rule once, for both validators: the zod check (the services) and, in .meta(), the same
// constant as the CRD's pattern/maxLength or a CEL rule beside it (the API server).
const envName = z.string().regex(ENV_VAR_NAME, { error: 'must be an environment variable name like MY_VAR' }).meta({ maxLength: NAME_MAX });
const quantity = z.union([
  z.string().regex(QUANTITY, { error: 'must be a Kubernetes quantity like 100m or 64Mi' }),
  z.number().nonnegative(),
]).meta({
  // The CRD's form of a quantity, as Kubernetes' own schemas write it.
  anyOf: [{ type: 'integer' }, { type: 'string' }],
  'x-kubernetes-int-or-string': true,
  pattern: QUANTITY.source,
});
const quantities = z.record(z.string().min(1), quantity);

const containerPortSchema = z.strictObject({
  name: z
    .string()
    .refine((name) => name.length <= PORT_NAME_MAX && PORT_NAME.test(name), {
      error: 'must be an IANA service name (at most 15 lowercase letters, digits and "-", with a letter)',
    })
    // PORT_NAME uses lookarounds, which the API server's RE2 lacks: the same rule in pattern + CEL.
    .meta({
      maxLength: PORT_NAME_MAX,
      pattern: '^[a-z0-9]([a-z0-9-]*[a-z0-9])?$',
      'x-kubernetes-validations': [celRule("self.matches('[a-z]') && !self.contains('--')", 'must be an IANA service name (at most 15 lowercase letters, digits and "-", with a letter)')],
    })
    .optional(),
  containerPort: z.number().int().min(1).max(65535),
  protocol: z.enum(['TCP', 'UDP', 'SCTP']).optional(),
});

const capabilityList = z.array(z.string().min(1).meta({ maxLength: NAME_MAX })).meta({ maxItems: LIST_MAX });
const selinuxPart = z.string().meta({ maxLength: NAME_MAX });

/** Known securityContext fields are checked; others pass through for newer Kubernetes fields. */
const securityContextSchema = z.looseObject({
  runAsNonRoot: z.boolean().optional(),
  runAsUser: z.number().int().nonnegative().optional(),
  runAsGroup: z.number().int().nonnegative().optional(),
  privileged: z.boolean().optional(),
  allowPrivilegeEscalation: z.boolean().optional(),
  readOnlyRootFilesystem: z.boolean().optional(),
  capabilities: z
    .strictObject({ add: capabilityList.optional(), drop: capabilityList.optional() })
    .optional(),
  seccompProfile: z
    .strictObject({
      type: z.enum(['RuntimeDefault', 'Localhost', 'Unconfined']),
      localhostProfile: z.string().min(1).optional(),
    })
    .optional(),
  // The other fields Pod Security judges in a container (pod-security.ts), declared so CEL can read them.
  appArmorProfile: z
    .strictObject({
      type: z.enum(['RuntimeDefault', 'Localhost', 'Unconfined']),
      localhostProfile: z.string().min(1).optional(),
    })
    .optional(),
  seLinuxOptions: z
    .strictObject({ user: selinuxPart.optional(), role: selinuxPart.optional(), type: selinuxPart.optional(), level: selinuxPart.optional() })
    .optional(),
  windowsOptions: z.looseObject({ hostProcess: z.boolean().optional() }).optional(),
  procMount: z.enum(['Default', 'Unmasked']).optional(),
});

const containerSchema = z.strictObject({
  name: dnsLabel,
  image: z.string().regex(/^\S+$/, { error: 'must be a non-empty image reference without spaces' }).meta({ maxLength: STRING_MAX }),
  imagePullPolicy: z.enum(['Always', 'IfNotPresent', 'Never']).optional(),
  command: z.array(z.string()).optional(),
  args: z.array(z.string()).optional(),
  ports: z.array(containerPortSchema).meta(listMap('containerPort')).optional(),
  resources: z.strictObject({ requests: quantities.optional(), limits: quantities.optional() }).optional(),
  securityContext: securityContextSchema.optional(),
  env: z.array(envVarSchema(envName)).meta(listMap('name')).optional(),
  // The rest of a container spec (container-spec-schema.ts): only present when set.
  envFrom: z.array(envFromSchema).meta({ maxItems: LIST_MAX }).optional(),
  volumeMounts: z.array(volumeMountSchema).meta(listMap('mountPath')).optional(),
  livenessProbe: restartingProbeSchema.optional(),
  readinessProbe: readinessProbeSchema.optional(),
  startupProbe: restartingProbeSchema.optional(),
  lifecycle: lifecycleSchema.optional(),
});

const parameterSchema = z
  .strictObject({
    annotation: z
      .string()
      .refine(isQualifiedNamePart, {
        error: 'must be an annotation name (letters, digits, "-", "_", ".", at most 63) without the prefix',
      })
      .refine((suffix) => !RESERVED_SUFFIXES.includes(suffix), { error: RESERVED_SUFFIXES_TAKEN })
      .meta({
        pattern: QUALIFIED_NAME_PART.source,
        maxLength: QUALIFIED_NAME_PART_MAX,
        'x-kubernetes-validations': [celRule(`!(self in [${RESERVED_SUFFIXES.map((s) => `'${s}'`).join(', ')}])`, RESERVED_SUFFIXES_TAKEN)],
      }),
    env: envName,
    required: z.boolean().default(false),
    default: z.string().optional(),
    pattern: z.string().meta({ maxLength: STRING_MAX }).optional(),
    format: z.enum(['url']).optional(),
    containerName: z.boolean().default(false),
  })
  .superRefine((parameter, ctx) => {
    let pattern: ParameterPattern | undefined;
    if (parameter.pattern !== undefined) {
      try {
        pattern = compileParameterPattern(parameter.pattern);
      } catch (error) {
        ctx.addIssue({ code: 'custom', path: ['pattern'], message: `is not an RE2 regular expression (the syntax of Kubernetes patterns): ${regexProblem(error)}` });
      }
    }
    if (parameter.default === undefined) return;
    if (parameter.required) {
      ctx.addIssue({ code: 'custom', path: ['default'], message: 'a required parameter cannot have a default' });
    }
    if (pattern && !pattern.test(parameter.default)) {
      ctx.addIssue({ code: 'custom', path: ['default'], message: `does not match the parameter's own pattern` });
    }
    if (parameter.format === 'url' && !isHttpUrl(parameter.default)) {
      ctx.addIssue({ code: 'custom', path: ['default'], message: 'is not an http(s) URL as the format requires' });
    }
  })
  .meta({
    'x-kubernetes-validations': [
      celRule("!(has(self.required) && self.required && has(self.default))", 'a required parameter cannot have a default', '.default'),
    ],
  });

const fieldEnvSchema = z.strictObject({
  env: envName,
  fieldPath: z
    .string()
    .regex(ENV_FIELD_PATH, {
      error: 'must be a downward API field such as metadata.name, metadata.namespace or status.podIP',
    })
    .meta({ maxLength: STRING_MAX }),
});

const bindingNameOf = (rbac: string) => `(has(${rbac}.binding) && has(${rbac}.binding.name) ? ${rbac}.binding.name : ${rbac}.clusterRole)`;
const bindingKindOf = (rbac: string) => `(has(${rbac}.binding) && has(${rbac}.binding.kind) ? ${rbac}.binding.kind : 'ClusterRoleBinding')`;
// A transition rule, so the API server alone can hold it: a binding's roleRef cannot change, and the
// syncer's way round (empty, delete after REVOKED_KEEP, recreate) leaves agents without RBAC meanwhile.
const ROLE_MOVES_WITH_BINDING = `self.clusterRole == oldSelf.clusterRole || ${bindingNameOf('self')} != ${bindingNameOf('oldSelf')} || ${bindingKindOf('self')} != ${bindingKindOf('oldSelf')}`;
const ROLE_CHANGED_ALONE =
  'changed while the bindings keep their name: a binding cannot change its role, so every agent would hold no RBAC until REVOKED_KEEP has passed; rename rbac.binding.name in the same edit';

const rbacSchema = z
  .strictObject({
    clusterRole: dnsSubdomain,
    binding: z
      .strictObject({
        kind: z.enum(['ClusterRoleBinding', 'RoleBinding']).default('ClusterRoleBinding'),
        // A ClusterRoleBinding per namespace is named <name>.<namespace>: room for a DNS label after it.
        name: z
          .string()
          .refine((name) => isDnsSubdomain(name) && name.length <= BINDING_NAME_MAX, { error: `must be a DNS subdomain of at most ${BINDING_NAME_MAX} characters (the per-namespace bindings append ".<namespace>")` })
          .meta({ pattern: DNS_SUBDOMAIN.source, maxLength: BINDING_NAME_MAX })
          .optional(),
      })
      .optional(),
    rules: z.array(policyRuleSchema).min(1, { error: 'must list at least one rule' }).meta({ maxItems: LIST_MAX }),
    // Entries of ESCALATION_RULES the admin accepts for this profile, by name (see escalation-rules.ts).
    [ESCALATION_OPT_OUT_FIELD]: z.array(z.enum(ESCALATION_NAMES)).meta({ maxItems: ESCALATION_NAMES.length }).optional(),
  })
  .superRefine(refuseEscalations)
  .superRefine(({ clusterRole, binding }, ctx) => {
    if (binding?.name === undefined && clusterRole.length > BINDING_NAME_MAX) ctx.addIssue({ code: 'custom', path: ['clusterRole'], message: BINDING_NAME_DEFAULT_TOO_LONG });
  })
  .meta({
    'x-kubernetes-validations': [
      ...escalationCelRules(),
      celRule(`(has(self.binding) && has(self.binding.name)) || size(self.clusterRole) <= ${BINDING_NAME_MAX}`, BINDING_NAME_DEFAULT_TOO_LONG, '.clusterRole'),
      celRule(ROLE_MOVES_WITH_BINDING, ROLE_CHANGED_ALONE, '.clusterRole'),
    ],
  })
  .transform(({ clusterRole, binding, rules, [ESCALATION_OPT_OUT_FIELD]: accepted }) => ({
    clusterRole,
    // ClusterRoleBinding by default; RoleBinding binds the ClusterRole per namespace instead.
    binding: { kind: binding?.kind ?? 'ClusterRoleBinding', name: binding?.name ?? clusterRole },
    rules,
    // Only when set, so that a profile without opt-outs parses (and hashes) as before.
    ...(accepted === undefined ? {} : { [ESCALATION_OPT_OUT_FIELD]: accepted }),
  }));

/** Who holds the pod's ServiceAccount token (see libs/sidecar/src/agent-token.ts). */
const serviceAccountTokenSchema = z
  .strictObject({
    agentOnly: z
      .boolean()
      .default(false)
      .meta({ description: 'Only the agent gets the API token (a projected volume); the pod\'s automatic token mount is turned off, so application containers hold no Kubernetes rights from Outrigger.' }),
    podMayKeepToken: z
      .boolean()
      .default(false)
      .meta({ description: `With agentOnly: a pod annotated <prefix>${KEEP_POD_TOKEN_SUFFIX}: "true" keeps its own token for its application containers. Without it that annotation is refused.` }),
  })
  .superRefine(({ agentOnly, podMayKeepToken }, ctx) => {
    if (podMayKeepToken && !agentOnly) ctx.addIssue({ code: 'custom', path: ['podMayKeepToken'], message: POD_MAY_KEEP_TOKEN_ALONE });
  })
  .meta({ 'x-kubernetes-validations': [celRule('!(has(self.podMayKeepToken) && self.podMayKeepToken) || (has(self.agentOnly) && self.agentOnly)', POD_MAY_KEEP_TOKEN_ALONE, '.podMayKeepToken')] });

/** The agent fields a canary may change: what an upgrade changes, nothing that widens what the agent may do. */
export const CANARY_FIELDS = ['image', 'imagePullPolicy', 'command', 'args', 'env', 'resources'] as const;

/** A staged change of the agent (canary.ts): some container fields, for the namespaces the selector picks. */
const CANARY_EMPTY = `must change at least one of ${CANARY_FIELDS.join(', ')}`;
const canarySchema = containerSchema
  .pick(Object.fromEntries(CANARY_FIELDS.map((field) => [field, true])) as { [F in (typeof CANARY_FIELDS)[number]]: true })
  .partial()
  .extend({ namespaceSelector: labelSelectorSchema })
  .refine((canary) => CANARY_FIELDS.some((field) => canary[field] !== undefined), { error: CANARY_EMPTY })
  .meta({
    description: 'A new agent for the namespaces namespaceSelector picks, every other pod keeps spec.container: promote by moving these fields into spec.container and removing canary, roll back by removing canary.',
    'x-kubernetes-validations': [celRule(CANARY_FIELDS.map((field) => `has(self.${field})`).join(' || '), CANARY_EMPTY)],
  });

export const agentProfileSchema = z
  .strictObject({
    name: dnsLabel,
    annotationPrefix: z
      .string()
      .refine(isAnnotationPrefix, { error: 'must be a DNS subdomain followed by "/", like xxl-agent/' })
      .refine((prefix) => !RESERVED_PREFIX.test(prefix), {
        error: `is reserved (Kubernetes prefixes and ${INJECT_ANNOTATION.split('/')[0]}/ cannot be used)`,
      })
      .meta({
        pattern: `${DNS_SUBDOMAIN.source.slice(0, -1)}/$`,
        maxLength: DNS_SUBDOMAIN_MAX + 1,
        'x-kubernetes-validations': [
          celRule(`!self.matches('${RESERVED_PREFIX.source.replace(/\\/g, '\\\\')}')`, `is reserved (Kubernetes prefixes and ${INJECT_ANNOTATION.split('/')[0]}/ cannot be used)`),
        ],
      }),
    container: containerSchema,
    parameters: z.array(parameterSchema).default([]).meta(listMap('annotation')),
    fieldEnv: z.array(fieldEnvSchema).default([]).meta(listMap('env')),
    nativeSidecar: z.boolean().default(false),
    // Only when set, so that other profiles parse (and hash) as before.
    podMayChooseNativeSidecar: z
      .boolean()
      .meta({ description: `A pod annotated <prefix>${NATIVE_SIDECAR_SUFFIX}: "true" or "false" chooses whether its agent is a native sidecar (default false: the annotation is refused).` })
      .optional(),
    holdApplicationUntilReady: z
      .boolean()
      .meta({ description: 'The agent is a native sidecar in every pod and the application containers start only once its startupProbe succeeds (default false).' })
      .optional(),
    // Absent means false; only when set, so that other profiles parse (and hash) as before.
    dangerouslyAllowHostNamespaces: z
      .boolean()
      .meta({ description: 'Inject into pods with hostNetwork, hostPID or hostIPC (default false): the agent then runs in the node\'s namespaces, its port open on the node. A hostPID pod is still refused where serviceAccountToken.agentOnly is set: the node\'s processes could read the agent\'s token.' })
      .optional(),
    // Only when set, so that other profiles parse (and hash) as before.
    serviceAccountToken: serviceAccountTokenSchema.optional(),
    [POD_SECURITY_OPT_OUT_FIELD]: z
      .enum(['baseline', 'privileged'])
      .meta({ description: 'Accept an agent securityContext below the restricted Pod Security level (default: restricted is required). Pods in namespaces that enforce a stricter level are refused.' })
      .optional(),
    rbac: rbacSchema.optional(),
    // Only when set, so that other profiles parse (and hash) as before.
    namespaceSelector: labelSelectorSchema
      .meta({ description: 'Among the namespaces labelled for injection, those the profile applies in (default: all): its agent is injected, counted and bound only there.' })
      .optional(),
    // Only when set, so that other profiles parse (and hash) as before.
    canary: canarySchema.optional(),
    // Only when set, so that other profiles parse (and hash) as before.
    overrides: overridesSchema.optional(),
    // Pod-level parts of the agent, added to each pod: only present when set.
    volumes: volumesSchema.optional(),
    imagePullSecrets: imagePullSecretsSchema.optional(),
    [NODE_ACCESS_OPT_OUT_FIELD]: nodeAccessOptOutSchema.optional(),
  })
  .superRefine((profile, ctx) => {
    refuseBelowPodSecurityFloor(profile, ctx);
    refuseVolumeProblems(profile, ctx);
    if (profile.holdApplicationUntilReady === true && profile.container.startupProbe === undefined) ctx.addIssue({ code: 'custom', path: ['holdApplicationUntilReady'], message: HOLD_NEEDS_STARTUP_PROBE });
    if (profile.holdApplicationUntilReady === true && profile.podMayChooseNativeSidecar === true) ctx.addIssue({ code: 'custom', path: ['holdApplicationUntilReady'], message: HOLD_AND_CHOICE });
    reportDuplicates(ctx, profile.parameters.map((p) => p.annotation), (i) => ['parameters', i, 'annotation'], 'annotation');
    const envSources: { name: string; path: (string | number)[] }[] = [
      ...profile.parameters.map((p, i) => ({ name: p.env, path: ['parameters', i, 'env'] })),
      ...profile.fieldEnv.map((f, i) => ({ name: f.env, path: ['fieldEnv', i, 'env'] })),
      ...(profile.container.env ?? []).map((e, i) => ({ name: e.name, path: ['container', 'env', i, 'name'] })),
    ];
    reportDuplicates(ctx, envSources.map((s) => s.name), (i) => envSources[i]?.path ?? [], 'env');
    // The canary's env replaces container.env: its names are checked against the same others.
    const canaryEnv = (profile.canary?.env ?? []).map((e, i) => ({ name: e.name, path: ['canary', 'env', i, 'name'] }));
    const canarySources = [...envSources.filter((s) => s.path[0] !== 'container'), ...canaryEnv];
    if (canaryEnv.length > 0) reportDuplicates(ctx, canarySources.map((s) => s.name), (i) => canarySources[i]?.path ?? [], 'env');
    const ports = profile.container.ports ?? [];
    reportDuplicates(ctx, ports.map((p) => String(p.containerPort)), (i) => ['container', 'ports', i, 'containerPort'], 'port');
    reportDuplicates(
      ctx,
      ports.map((p) => p.name ?? ''),
      (i) => ['container', 'ports', i, 'name'],
      'port name',
    );
  })
  .meta({
    'x-kubernetes-validations': [
      // Env names are unique across parameters[].env, fieldEnv[].env and container.env[].name.
      celRule('!has(self.parameters) || self.parameters.all(p, self.parameters.filter(q, q.env == p.env).size() == 1)', 'duplicate env among parameters[].env', '.parameters'),
      celRule('!has(self.parameters) || !has(self.fieldEnv) || self.parameters.all(p, !self.fieldEnv.exists(f, f.env == p.env))', 'an env name is both a parameter\'s and a fieldEnv\'s', '.fieldEnv'),
      celRule(
        '!has(self.container.env) || self.container.env.all(e, !(has(self.parameters) && self.parameters.exists(p, p.env == e.name)) && !(has(self.fieldEnv) && self.fieldEnv.exists(f, f.env == e.name)))',
        'an env name of container.env is also a parameter\'s or a fieldEnv\'s',
        '.container.env',
      ),
      celRule(
        '!has(self.canary) || !has(self.canary.env) || self.canary.env.all(e, !(has(self.parameters) && self.parameters.exists(p, p.env == e.name)) && !(has(self.fieldEnv) && self.fieldEnv.exists(f, f.env == e.name)))',
        'an env name of canary.env is also a parameter\'s or a fieldEnv\'s',
        '.canary.env',
      ),
      celRule('!has(self.container.volumeMounts) || self.container.volumeMounts.all(m, has(self.volumes) && self.volumes.exists(v, v.name == m.name))', MOUNT_WITHOUT_VOLUME, '.container.volumeMounts'),
      celRule(`!has(self.volumes) || self.volumes.all(v, !has(v.hostPath)) || (has(self.${NODE_ACCESS_OPT_OUT_FIELD}) && 'hostPath' in self.${NODE_ACCESS_OPT_OUT_FIELD})`, HOST_PATH_REFUSED, '.volumes'),
      celRule('!has(self.holdApplicationUntilReady) || !self.holdApplicationUntilReady || has(self.container.startupProbe)', HOLD_NEEDS_STARTUP_PROBE, '.holdApplicationUntilReady'),
      celRule('!has(self.holdApplicationUntilReady) || !self.holdApplicationUntilReady || !has(self.podMayChooseNativeSidecar) || !self.podMayChooseNativeSidecar', HOLD_AND_CHOICE, '.holdApplicationUntilReady'),
      ...podSecurityCelRules(),
    ],
  });


/** Mounts name the profile's own volumes, hostPath only with the opt-out, named probe ports exist. */
function refuseVolumeProblems(
  profile: { container: z.output<typeof containerSchema>; volumes?: z.output<typeof volumesSchema> | undefined; [NODE_ACCESS_OPT_OUT_FIELD]?: readonly string[] | undefined },
  ctx: z.RefinementCtx,
): void {
  const volumes = profile.volumes ?? [];
  reportDuplicates(ctx, volumes.map((v) => v.name), (i) => ['volumes', i, 'name'], 'volume name');
  (profile.container.volumeMounts ?? []).forEach((mount, i) => {
    if (!volumes.some((v) => v.name === mount.name)) ctx.addIssue({ code: 'custom', path: ['container', 'volumeMounts', i, 'name'], message: MOUNT_WITHOUT_VOLUME });
  });
  reportDuplicates(ctx, (profile.container.volumeMounts ?? []).map((m) => m.mountPath), (i) => ['container', 'volumeMounts', i, 'mountPath'], 'mountPath');
  volumes.forEach((volume, i) => {
    if (volume.hostPath !== undefined && !profile[NODE_ACCESS_OPT_OUT_FIELD]?.includes('hostPath')) ctx.addIssue({ code: 'custom', path: ['volumes', i, 'hostPath'], message: HOST_PATH_REFUSED });
  });
  const portNames = new Set((profile.container.ports ?? []).flatMap((p) => (p.name === undefined ? [] : [p.name])));
  const handlers = [
    ...(['livenessProbe', 'readinessProbe', 'startupProbe'] as const).map((probe) => ({ path: [probe], handler: profile.container[probe] })),
    ...(['postStart', 'preStop'] as const).map((hook) => ({ path: ['lifecycle', hook], handler: profile.container.lifecycle?.[hook] })),
  ];
  for (const { path, handler } of handlers) {
    for (const action of ['httpGet', 'tcpSocket'] as const) {
      const port = handler !== undefined && action in handler ? (handler as Record<string, { port?: unknown } | undefined>)[action]?.port : undefined;
      if (typeof port === 'string' && !portNames.has(port)) ctx.addIssue({ code: 'custom', path: ['container', ...path, action, 'port'], message: NAMED_PORT_MISSING });
    }
  }
}

export type AgentProfile = z.output<typeof agentProfileSchema>;
export type AgentProfileInput = z.input<typeof agentProfileSchema>;
export type ProfileParameter = AgentProfile['parameters'][number];
export type AgentContainerSpec = AgentProfile['container'];
/** What a profile's agents are bound by: a ClusterRoleBinding per namespace, or a RoleBinding in it. */
export type RbacBindingKind = NonNullable<AgentProfile['rbac']>['binding']['kind'];

/** The profiles file: `profiles:` followed by a list. Names, prefixes and containers are unique. */
export const profilesFileSchema = z
  .strictObject({ profiles: z.array(agentProfileSchema).min(1, { error: 'must list at least one profile' }) })
  .superRefine(({ profiles }, ctx) => {
    const at = (field: string) => (i: number) => ['profiles', i, ...field.split('.')];
    reportDuplicates(ctx, profiles.map((p) => p.name), at('name'), 'profile name');
    reportDuplicates(ctx, profiles.map((p) => p.annotationPrefix), at('annotationPrefix'), 'annotation prefix');
    reportDuplicates(ctx, profiles.map((p) => p.container.name), at('container.name'), 'container name');
    reportDuplicates(ctx, profiles.map((p) => p.rbac?.clusterRole ?? ''), at('rbac.clusterRole'), 'ClusterRole');
  });

function reportDuplicates(
  ctx: z.RefinementCtx,
  values: readonly string[],
  pathOf: (index: number) => (string | number)[],
  what: string,
): void {
  values.forEach((value, index) => {
    // Empty means "not set" (an unnamed port, a profile without RBAC): never a duplicate.
    if (value !== '' && values.indexOf(value) !== index) {
      ctx.addIssue({ code: 'custom', path: pathOf(index), message: `duplicate ${what} ${JSON.stringify(value)}` });
    }
  });
}

function regexProblem(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  // RE2 says "error parsing regexp: missing closing ): `(`": keep what follows the prefix.
  return message.replace(/^error parsing regexp: /, '');
}
