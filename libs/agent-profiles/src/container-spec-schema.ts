import { z } from 'zod';
import { DNS_SUBDOMAIN_MAX, ENV_FIELD_PATH, QUANTITY, SERVICE_ACCOUNT_TOKEN_PATH } from '@outrigger/admission';
import { dnsLabel, dnsSubdomain } from './name-schemas.js';
import { celRule, celString, listMap, LIST_MAX, NAME_MAX, STRING_MAX } from './crd-meta.js';

/**
 * The parts of a Kubernetes container and pod spec an agent may bring beyond image and command:
 * env from Secrets, ConfigMaps and the downward API, envFrom, volumes and their mounts, probes,
 * lifecycle hooks, image pull secrets. Each is the core/v1 shape (so the injector copies it as
 * is) narrowed to what cannot reach the node: probe and hook `host` fields are absent (the kubelet
 * would connect from the node to any address), and a hostPath volume loads only when the profile
 * names it in `dangerouslyAllowNodeAccess`.
 */


/** A ConfigMap or Secret key (validation.IsConfigMapKey). */
const CONFIG_KEY = /^[-._a-zA-Z0-9]+$/;
const configKey = z.string().regex(CONFIG_KEY, { error: 'must be a key like app.properties (letters, digits, "-", "_", ".")' }).meta({ maxLength: DNS_SUBDOMAIN_MAX });
const quantity = z.string().regex(QUANTITY, { error: 'must be a Kubernetes quantity like 1m or 1Mi' }).meta({ maxLength: NAME_MAX });
const seconds = z.number().int().min(0).max(2147483647);
const positive = z.number().int().min(1).max(2147483647);
/** A file mode (0 to 0777), written in decimal in JSON as Kubernetes does. */
const fileMode = z.number().int().min(0).max(0o777);
/** A path inside a volume: relative, steps neither empty nor "." nor ".." (RE2 and JavaScript alike). */
const STEP = '([^/.][^/]*|\\.[^/.][^/]*|\\.\\.[^/]+)';
const RELATIVE_PATH = new RegExp(`^${STEP}(/${STEP})*$`);
const relativePath = z.string().regex(RELATIVE_PATH, { error: 'must be a relative path without empty, "." or ".." steps' }).meta({ maxLength: STRING_MAX });
const portNumber = z.number().int().min(1).max(65535);
/** A port by number or by the name of one of the agent's ports. */
const port = z.union([portNumber, z.string().min(1).max(15)]).meta({ anyOf: [{ type: 'integer' }, { type: 'string' }], 'x-kubernetes-int-or-string': true });

/** zod and CEL: exactly one of `keys` is set. */
function exactlyOne<T extends z.ZodObject>(schema: T, keys: readonly string[], what: string): T {
  const message = `must set exactly one of ${keys.join(', ')} (${what})`;
  return schema
    .superRefine((value, ctx) => {
      const set = keys.filter((key) => (value as Record<string, unknown>)[key] !== undefined);
      if (set.length !== 1) ctx.addIssue({ code: 'custom', message });
    })
    .meta({ 'x-kubernetes-validations': [celRule(`${keys.map((key) => `(has(self.${key}) ? 1 : 0)`).join(' + ')} == 1`, message)] }) as unknown as T;
}

const keyRef = z.strictObject({ name: dnsSubdomain, key: configKey, optional: z.boolean().optional() });
const RESOURCE_FIELDS = ['limits.cpu', 'limits.memory', 'limits.ephemeral-storage', 'requests.cpu', 'requests.memory', 'requests.ephemeral-storage'] as const;

const envVarSource = exactlyOne(
  z.strictObject({
    secretKeyRef: keyRef.optional(),
    configMapKeyRef: keyRef.optional(),
    fieldRef: z
      .strictObject({
        apiVersion: z.literal('v1').optional(),
        fieldPath: z.string().regex(ENV_FIELD_PATH, { error: 'must be a downward API field such as metadata.name, metadata.namespace or status.podIP' }).meta({ maxLength: STRING_MAX }),
      })
      .optional(),
    resourceFieldRef: z.strictObject({ resource: z.enum(RESOURCE_FIELDS), divisor: quantity.optional() }).optional(),
  }),
  ['secretKeyRef', 'configMapKeyRef', 'fieldRef', 'resourceFieldRef'],
  'a Secret or ConfigMap of the pod\'s namespace, a downward API field, or the agent\'s own resources',
);

/** A static value, or a value from the pod's namespace (valueFrom). */
export const envVarSchema = (envName: z.ZodType<string>) =>
  exactlyOne(z.strictObject({ name: envName, value: z.string().optional(), valueFrom: envVarSource.optional() }), ['value', 'valueFrom'], 'value or valueFrom');

const localRef = z.strictObject({ name: dnsSubdomain, optional: z.boolean().optional() });
export const envFromSchema = exactlyOne(
  z.strictObject({
    prefix: z.string().regex(/^[-._a-zA-Z][-._a-zA-Z0-9]*$/, { error: 'must start an environment variable name' }).meta({ maxLength: NAME_MAX }).optional(),
    configMapRef: localRef.optional(),
    secretRef: localRef.optional(),
  }),
  ['configMapRef', 'secretRef'],
  'a ConfigMap or Secret of the pod\'s namespace',
);

const TOKEN_PATH_TAKEN = `must not be ${SERVICE_ACCOUNT_TOKEN_PATH} or under it (the agent's API token is mounted there)`;
export const volumeMountSchema = z.strictObject({
  name: dnsLabel,
  mountPath: z
    .string()
    .regex(/^\/[^:]*$/, { error: 'must be an absolute path (without ":")' })
    .refine((path) => path !== SERVICE_ACCOUNT_TOKEN_PATH && !path.startsWith(`${SERVICE_ACCOUNT_TOKEN_PATH}/`), { error: TOKEN_PATH_TAKEN })
    .meta({
      maxLength: STRING_MAX,
      'x-kubernetes-validations': [celRule(`self != ${celString(SERVICE_ACCOUNT_TOKEN_PATH)} && !self.startsWith(${celString(`${SERVICE_ACCOUNT_TOKEN_PATH}/`)})`, TOKEN_PATH_TAKEN)],
    }),
  readOnly: z.boolean().optional(),
  subPath: relativePath.optional(),
});

const httpGet = z.strictObject({
  path: z.string().regex(/^\//, { error: 'must start with "/"' }).meta({ maxLength: STRING_MAX }).optional(),
  port,
  scheme: z.enum(['HTTP', 'HTTPS']).optional(),
  httpHeaders: z.array(z.strictObject({ name: z.string().min(1).meta({ maxLength: NAME_MAX }), value: z.string().meta({ maxLength: STRING_MAX }) })).meta({ maxItems: LIST_MAX }).optional(),
});
const execAction = z.strictObject({ command: z.array(z.string()).min(1).meta({ maxItems: LIST_MAX }) });

const PROBE_HANDLERS = ['exec', 'httpGet', 'tcpSocket', 'grpc'];
const probeFields = {
  exec: execAction.optional(),
  httpGet: httpGet.optional(),
  tcpSocket: z.strictObject({ port }).optional(),
  grpc: z.strictObject({ port: portNumber, service: z.string().meta({ maxLength: NAME_MAX }).optional() }).optional(),
  initialDelaySeconds: seconds.optional(),
  timeoutSeconds: positive.optional(),
  periodSeconds: positive.optional(),
  failureThreshold: positive.optional(),
};
const ONE_SUCCESS = 'must be 1 (Kubernetes allows no other value for liveness and startup probes)';
/** Liveness and startup probes: successThreshold is 1, and they may shorten the grace period. */
export const restartingProbeSchema = exactlyOne(
  z.strictObject({
    ...probeFields,
    successThreshold: z.literal(1, { error: ONE_SUCCESS }).optional(),
    terminationGracePeriodSeconds: positive.optional(),
  }),
  PROBE_HANDLERS,
  'the probe\'s handler',
);
export const readinessProbeSchema = exactlyOne(z.strictObject({ ...probeFields, successThreshold: positive.optional() }), PROBE_HANDLERS, 'the probe\'s handler');

const hookHandler = exactlyOne(
  z.strictObject({ exec: execAction.optional(), httpGet: httpGet.optional(), sleep: z.strictObject({ seconds: positive }).optional() }),
  ['exec', 'httpGet', 'sleep'],
  'the hook\'s handler',
);
export const lifecycleSchema = z.strictObject({ postStart: hookHandler.optional(), preStop: hookHandler.optional() });

const keyToPath = z.strictObject({ key: configKey, path: relativePath, mode: fileMode.optional() });
const items = z.array(keyToPath).meta({ maxItems: LIST_MAX }).optional();
const downwardItem = z.strictObject({
  path: relativePath,
  fieldRef: z.strictObject({ apiVersion: z.literal('v1').optional(), fieldPath: z.string().regex(ENV_FIELD_PATH, { error: 'must be a downward API field such as metadata.name' }).meta({ maxLength: STRING_MAX }) }),
  mode: fileMode.optional(),
});
const configMapSource = z.strictObject({ name: dnsSubdomain, items, optional: z.boolean().optional() });
const secretSource = z.strictObject({ name: dnsSubdomain, items, optional: z.boolean().optional() });

/** The volume types an agent may bring; hostPath only with the node-access opt-out. */
export const VOLUME_TYPES = ['emptyDir', 'configMap', 'secret', 'projected', 'hostPath'] as const;
export const volumeSchema = exactlyOne(
  z.strictObject({
    name: dnsLabel,
    emptyDir: z.strictObject({ medium: z.enum(['', 'Memory']).optional(), sizeLimit: quantity.optional() }).optional(),
    configMap: z.strictObject({ name: dnsSubdomain, items, defaultMode: fileMode.optional(), optional: z.boolean().optional() }).optional(),
    secret: z.strictObject({ secretName: dnsSubdomain, items, defaultMode: fileMode.optional(), optional: z.boolean().optional() }).optional(),
    projected: z
      .strictObject({
        sources: z
          .array(exactlyOne(z.strictObject({ configMap: configMapSource.optional(), secret: secretSource.optional(), downwardAPI: z.strictObject({ items: z.array(downwardItem).meta({ maxItems: LIST_MAX }) }).optional() }), ['configMap', 'secret', 'downwardAPI'], 'a projected source'))
          .min(1)
          .meta({ maxItems: LIST_MAX }),
        defaultMode: fileMode.optional(),
      })
      .optional(),
    hostPath: z.strictObject({ path: z.string().regex(/^\//, { error: 'must be an absolute path' }).meta({ maxLength: STRING_MAX }), type: z.enum(['', 'DirectoryOrCreate', 'Directory', 'FileOrCreate', 'File', 'Socket', 'CharDevice', 'BlockDevice']).optional() }).optional(),
  }),
  VOLUME_TYPES.slice(),
  'the volume\'s type',
);

export const volumesSchema = z.array(volumeSchema).meta(listMap('name'));
export const imagePullSecretsSchema = z.array(z.strictObject({ name: dnsSubdomain })).meta(listMap('name'));

/** Node access a profile accepts by name (`dangerouslyAllowNodeAccess`). */
export const NODE_ACCESS = ['hostPath'] as const;
export const NODE_ACCESS_OPT_OUT_FIELD = 'dangerouslyAllowNodeAccess';
export const nodeAccessOptOutSchema = z
  .array(z.enum(NODE_ACCESS))
  .meta({ maxItems: NODE_ACCESS.length, 'x-kubernetes-list-type': 'set', description: 'Node access the agent may have: hostPath volumes (the node\'s filesystem). Absent: none.' });
