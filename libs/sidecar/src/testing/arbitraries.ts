import fc from 'fast-check';
import type { AdmissionApiVersion, AdmissionReview, JsonObject, JsonValue } from '@outrigger/admission';
import { referenceProfile } from '@outrigger/agent-profiles';

const XXL_JOB_PROFILE = referenceProfile();

/** Test-only fast-check generators for realistic raw pods and reviews around them. */

/** Keys that break naive JSON pointer handling, next to ordinary ones. */
export const oddKey = fc.oneof(
  fc.constantFrom('a/b', '~', '~0', '~1', '/', '//', 'x~1y/z', '~01', 'example.com/name', 'xxl-agent/mystery', '__proto__', 'constructor', ''),
  fc.string({ maxLength: 12 }),
);

const unknownValue: fc.Arbitrary<JsonValue> = fc.jsonValue({ maxDepth: 3 }) as fc.Arbitrary<JsonValue>;

/** Unknown fields to sprinkle into an object, never clobbering the fields we care about. */
function unknownFields(reserved: readonly string[]): fc.Arbitrary<JsonObject> {
  return fc
    .dictionary(oddKey, unknownValue, { maxKeys: 3 })
    .map((fields) => Object.fromEntries(Object.entries(fields).filter(([key]) => !reserved.includes(key))));
}

const containerName = fc.stringMatching(/^[a-z][a-z0-9-]{0,10}[a-z0-9]$/);

function container(name: string, extra: JsonObject, native: boolean): JsonObject {
  return { name, image: `registry.example.com/${name}:1.0.0`, ...extra, ...(native ? { restartPolicy: 'Always' } : {}) };
}

/** How the pod relates to the xxl-job profile. */
const optIn = fc.constantFrom(
  'none',
  'enabled',
  'enabled-by-list',
  'disabled',
  'bad-boolean',
  'missing-job-addr',
  'bad-url',
  'unknown-target',
  'unknown-annotation',
  'already-injected',
  'status-without-agent',
  'agent-container-present',
  'impostor-agent-container',
  'forged-not-opted-in',
  'copied-not-opted-in',
);
export type OptIn = typeof optIn extends fc.Arbitrary<infer T> ? T : never;

/** The pod's own API token as the ServiceAccount plugin left it: mounted in every container, turned off by the pod, or neither. */
const podToken = fc.constantFrom('plugin', 'off', 'none');
export type PodToken = typeof podToken extends fc.Arbitrary<infer T> ? T : never;

export interface GeneratedPod {
  readonly pod: JsonObject;
  readonly namespace: string;
  readonly optIn: OptIn;
  readonly podToken: PodToken;
}

export const podArbitrary: fc.Arbitrary<GeneratedPod> = fc
  .record({
    names: fc.uniqueArray(containerName.filter((name) => name !== 'xxl-agent'), { minLength: 1, maxLength: 4 }),
    initNames: fc.uniqueArray(containerName.map((name) => `init-${name}`), { maxLength: 3 }),
    nativeInit: fc.boolean(),
    defaulted: fc.boolean(),
    containerExtras: fc.array(unknownFields(['name', 'image', 'restartPolicy']), { minLength: 4, maxLength: 4 }),
    annotations: fc.option(fc.dictionary(oddKey, fc.string({ maxLength: 20 }), { maxKeys: 5 }), { nil: undefined }),
    labels: fc.option(fc.dictionary(oddKey, fc.string({ maxLength: 10 }), { maxKeys: 3 }), { nil: undefined }),
    metadataExtra: unknownFields(['name', 'generateName', 'namespace', 'annotations', 'labels']),
    specExtra: unknownFields(['containers', 'initContainers', 'volumes', 'automountServiceAccountToken']),
    topExtra: unknownFields(['apiVersion', 'kind', 'metadata', 'spec']),
    generateName: fc.boolean(),
    namespaceInObject: fc.boolean(),
    namespace: fc.constantFrom('default', 'shop', 'team-a'),
    target: fc.nat(),
    optIn,
    podToken,
  })
  .map((g) => {
    // Under the profile's prefix only what optIn puts there: any other key is an unknown annotation, refused.
    const annotations: Record<string, JsonValue> = Object.fromEntries(Object.entries(g.annotations ?? {}).filter(([key]) => !key.startsWith('xxl-agent/')));
    const target = g.names[g.target % g.names.length] ?? 'app';
    // The opt-in annotations are set last so random keys cannot hide them.
    Object.assign(annotations, optInAnnotations(g.optIn, target));
    if (g.optIn === 'forged-not-opted-in' || g.optIn === 'copied-not-opted-in') delete annotations['xxl-agent/enable'];
    const containers = g.names.map((name, index) => container(name, g.containerExtras[index] ?? {}, false));
    // The profile's own image: only the missing status annotation gives it away.
    if (g.optIn === 'agent-container-present') containers.push(container('xxl-agent', { image: XXL_JOB_PROFILE.container.image }, false));
    if (g.optIn === 'impostor-agent-container') containers.push(container('xxl-agent', {}, false));
    if (g.optIn === 'already-injected' || g.optIn === 'copied-not-opted-in') containers.push(exactAgent(target, g.defaulted));
    // The agent's name and image, with a command of the pod author's choosing.
    if (g.optIn === 'forged-not-opted-in') containers.push({ ...exactAgent(target, g.defaulted), command: ['sh', '-c', 'cat /var/run/secrets/kubernetes.io/serviceaccount/token'] });
    const metadata: JsonObject = {
      ...g.metadataExtra,
      ...(g.generateName ? { generateName: 'worker-7d9c8b5f4-' } : { name: 'worker' }),
      ...(g.namespaceInObject ? { namespace: g.namespace } : {}),
      ...(g.labels ? { labels: g.labels } : {}),
      ...(g.annotations !== undefined || g.optIn !== 'none' ? { annotations } : {}),
    };
    const spec: JsonObject = {
      ...g.specExtra,
      containers,
      ...(g.initNames.length > 0
        ? { initContainers: g.initNames.map((name, index) => container(name, {}, g.nativeInit && index === 0)) }
        : {}),
    };
    if (g.podToken === 'off') spec['automountServiceAccountToken'] = false;
    if (g.podToken === 'plugin') withPluginToken(spec);
    // A copy of an injected pod carries the injector's token changes, whatever it had before.
    if (g.optIn === 'already-injected' || g.optIn === 'copied-not-opted-in' || g.optIn === 'forged-not-opted-in') withAgentToken(spec);
    const pod: JsonObject = { ...g.topExtra, apiVersion: 'v1', kind: 'Pod', metadata, spec };
    return { pod, namespace: g.namespace, optIn: g.optIn, podToken: g.podToken };
  });

/** What the ServiceAccount admission plugin does before the webhooks: its volume, mounted read-only in every container. */
function withPluginToken(spec: JsonObject): void {
  const name = 'kube-api-access-9xq2z';
  spec['volumes'] = [{ name, projected: { sources: [{ serviceAccountToken: { expirationSeconds: 3607, path: 'token' } }], defaultMode: 420 } }];
  for (const list of ['initContainers', 'containers']) {
    for (const c of (spec[list] ?? []) as JsonObject[]) c['volumeMounts'] = [{ name, readOnly: true, mountPath: '/var/run/secrets/kubernetes.io/serviceaccount' }];
  }
}

/** What the injector does for the reference (agentOnly) profile: the pod's token off, the agent's own token and data volumes. */
function withAgentToken(spec: JsonObject): void {
  spec['automountServiceAccountToken'] = false;
  spec['volumes'] = [
    {
      name: 'outrigger-agent-token',
      projected: {
        sources: [
          { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
          { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
          { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
        ],
        defaultMode: 420,
      },
    },
    { name: 'xxl-agent-data', emptyDir: {} },
  ];
  for (const list of ['initContainers', 'containers']) {
    for (const c of (spec[list] ?? []) as JsonObject[]) {
      if (c['name'] === 'xxl-agent') {
        c['volumeMounts'] = [
          { name: 'xxl-agent-data', mountPath: '/var/lib/xxl-agent' },
          { name: 'outrigger-agent-token', readOnly: true, mountPath: '/var/run/secrets/kubernetes.io/serviceaccount' },
        ];
      }
      else delete c['volumeMounts'];
    }
  }
}

/** The reference profile's agent for the valid opt-in, written out by hand; optionally with the API server's defaults. */
function exactAgent(target: string, defaulted: boolean): JsonObject {
  return {
    name: 'xxl-agent',
    image: 'ghcr.io/outrigger/xxl-agent:0.1.0',
    imagePullPolicy: 'IfNotPresent',
    ports: [{ name: 'http-xxl-agent', containerPort: 9999, protocol: 'TCP' }],
    resources: { requests: { cpu: '10m', memory: '32Mi' }, limits: { cpu: '200m', memory: '128Mi' } },
    securityContext: {
      runAsNonRoot: true,
      runAsUser: 65532,
      runAsGroup: 65532,
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'] },
      seccompProfile: { type: 'RuntimeDefault' },
    },
    env: [
      { name: 'XXL_JOB_ADDR', value: 'http://xxl-job-admin.jobs:8080/xxl-job-admin' },
      { name: 'CONTAINER_NAME', value: target },
      { name: 'XXL_JOB_NAME', value: 'nightly' },
      { name: 'NAMESPACE', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } } },
      { name: 'POD_NAME', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.name' } } },
      { name: 'POD_IP', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'status.podIP' } } },
      { name: 'XXL_JOB_ACCESS_TOKEN', valueFrom: { secretKeyRef: { name: 'xxl-job-access-token', key: 'token' } } },
    ],
    livenessProbe: {
      httpGet: { path: '/healthz', port: 'http-xxl-agent', ...(defaulted ? { scheme: 'HTTP' } : {}) },
      periodSeconds: 10,
      failureThreshold: 3,
      ...(defaulted ? { timeoutSeconds: 1, successThreshold: 1 } : {}),
    },
    readinessProbe: {
      httpGet: { path: '/readyz', port: 'http-xxl-agent', ...(defaulted ? { scheme: 'HTTP' } : {}) },
      periodSeconds: 5,
      ...(defaulted ? { timeoutSeconds: 1, successThreshold: 1, failureThreshold: 3 } : {}),
    },
    ...(defaulted ? { terminationMessagePath: '/dev/termination-log', terminationMessagePolicy: 'File' } : {}),
  };
}

function optInAnnotations(kind: OptIn, target: string): Record<string, string> {
  const valid = {
    'xxl-agent/enable': 'true',
    'xxl-agent/job-addr': 'http://xxl-job-admin.jobs:8080/xxl-job-admin',
    'xxl-agent/target-container': target,
    'xxl-agent/job-name': 'nightly',
  };
  switch (kind) {
    case 'none':
      return {};
    case 'enabled':
    case 'agent-container-present':
    case 'impostor-agent-container':
      return valid;
    case 'enabled-by-list': {
      const { 'xxl-agent/enable': _enable, ...rest } = valid;
      return { ...rest, 'outrigger.dev/inject': 'xxl-job' };
    }
    case 'disabled':
      return { ...valid, 'xxl-agent/enable': 'false' };
    case 'bad-boolean':
      return { ...valid, 'xxl-agent/enable': 'yes' };
    case 'missing-job-addr': {
      const { 'xxl-agent/job-addr': _addr, ...rest } = valid;
      return rest;
    }
    case 'bad-url':
      return { ...valid, 'xxl-agent/job-addr': 'xxl-job-admin:8080' };
    case 'unknown-target':
      return { ...valid, 'xxl-agent/target-container': 'no-such-container!' };
    case 'unknown-annotation':
      return { ...valid, 'xxl-agent/mystery': 'x' };
    case 'already-injected':
    case 'status-without-agent':
    case 'forged-not-opted-in':
    case 'copied-not-opted-in':
      return { ...valid, 'xxl-agent/status': '{"profile":"xxl-job","hash":"0","version":"0"}' };
  }
}

/** Wraps a raw pod in the AdmissionReview kube-apiserver would send for its CREATE. */
export function podCreateReview(
  pod: JsonObject,
  namespace: string,
  apiVersion: AdmissionApiVersion = 'admission.k8s.io/v1',
): AdmissionReview {
  return {
    apiVersion,
    kind: 'AdmissionReview',
    request: {
      uid: '00000000-0000-4000-8000-000000000001',
      kind: { group: '', version: 'v1', kind: 'Pod' },
      resource: { group: '', version: 'v1', resource: 'pods' },
      namespace,
      operation: 'CREATE',
      userInfo: { username: 'system:serviceaccount:kube-system:replicaset-controller' },
      object: pod,
      dryRun: false,
    },
  };
}
