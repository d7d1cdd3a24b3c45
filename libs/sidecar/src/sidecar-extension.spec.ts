import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { AdmissionReview, JsonObject } from '@outrigger/admission';
import { admissionContext, applyPatchCopy, decodePatch, type PatchOperation, protectedNamespacesFor, type ReviewOutcome, reviewResponse } from '@outrigger/admission';
import { parseProfiles, profileHash, REFERENCE_PROFILE_FILE, referenceProfile } from '@outrigger/agent-profiles';
import type { AgentProfile } from '@outrigger/agent-profiles';
import { inNamespace, loadReview, loadTextFixture, requestObject, withAnnotations } from './testing/fixtures.js';
import { arrayAt, inflatePod, objectAt } from './testing/pods.js';
import { AGENT_TOKEN_VOLUME, agentTokenVolume } from './service-account-token.js';
import { sidecarExtension } from './sidecar-extension.js';

const XXL_JOB_PROFILE = referenceProfile();

const VERSION = '0.1.0-test';
/** The reference profile's status; it turned the pod's automatic token off (the fixture pods had it on). */
const STATUS = JSON.stringify({ profile: 'xxl-job', hash: profileHash(XXL_JOB_PROFILE), version: VERSION, automountOff: true, volumes: ['xxl-agent-data'] });
/** The reference agent's data directory (run logs, the callback spool), written out by hand. */
const DATA_VOLUME = { name: 'xxl-agent-data', emptyDir: {} };

/** The reference profile (its one copy) and the tracing fixture, as one profiles file holds them. */
function twoProfiles(): AgentProfile[] {
  const parsed = parseProfiles([readFileSync(REFERENCE_PROFILE_FILE, 'utf8'), loadTextFixture('profiles/tracing.yaml')].join('\n---\n'));
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.value;
}

function run(review: AdmissionReview, profiles: AgentProfile[] = [XXL_JOB_PROFILE], protectedNamespaces?: readonly string[]): ReviewOutcome {
  return reviewResponse(review, [sidecarExtension({ profiles, injectorVersion: VERSION, ...(protectedNamespaces ? { protectedNamespaces } : {}) })]);
}

function patchOf(outcome: ReviewOutcome): PatchOperation[] {
  const encoded = outcome.reply.response.patch;
  return encoded === undefined ? [] : decodePatch(encoded);
}

/** The pod the API server would persist: the request object with our patch applied. */
function patched(review: AdmissionReview, outcome: ReviewOutcome): JsonObject {
  return applyPatchCopy(requestObject(review), patchOf(outcome));
}

function denial(outcome: ReviewOutcome): { code: number; message: string; decision: string } {
  const { response } = outcome.reply;
  expect(response.allowed).toBe(false);
  expect(response.patch).toBeUndefined();
  return { code: response.status?.code ?? 0, message: response.status?.message ?? '', decision: outcome.decision };
}

/** The agent container the reference profile yields, written out by hand; with the pod's API token volume, if it has one. */
function xxlAgent(addr: string, target: string, jobName: string, tokenVolume?: string): JsonObject {
  return {
    name: 'xxl-agent',
    image: 'ghcr.io/outrigger/xxl-agent:0.1.0',
    imagePullPolicy: 'IfNotPresent',
    ports: [{ name: 'http-xxl-agent', containerPort: 9999, protocol: 'TCP' }],
    livenessProbe: { httpGet: { path: '/healthz', port: 'http-xxl-agent' }, periodSeconds: 10, failureThreshold: 3 },
    readinessProbe: { httpGet: { path: '/readyz', port: 'http-xxl-agent' }, periodSeconds: 5 },
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
      { name: 'XXL_JOB_ADDR', value: addr },
      { name: 'CONTAINER_NAME', value: target },
      { name: 'XXL_JOB_NAME', value: jobName },
      { name: 'NAMESPACE', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } } },
      { name: 'POD_NAME', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.name' } } },
      { name: 'POD_IP', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'status.podIP' } } },
      { name: 'XXL_JOB_ACCESS_TOKEN', valueFrom: { secretKeyRef: { name: 'xxl-job-access-token', key: 'token' } } },
    ],
    volumeMounts: [
      { name: 'xxl-agent-data', mountPath: '/var/lib/xxl-agent' },
      ...(tokenVolume ? [{ name: tokenVolume, readOnly: true, mountPath: '/var/run/secrets/kubernetes.io/serviceaccount' }] : []),
    ],
  };
}

const ORDERS_AGENT = xxlAgent('http://xxl-job-admin.jobs.svc:8080/xxl-job-admin', 'orders', 'orders-reconcile', AGENT_TOKEN_VOLUME);

/** The pod as the reference profile (agentOnly) leaves it: no token of its own, the agent its own token and data volumes. */
function withAgentOnlyToken(pod: JsonObject, agent: JsonObject): JsonObject {
  const spec = objectAt(pod, 'spec');
  spec['volumes'] = [...arrayAt(pod, 'spec', 'volumes').filter((v) => !String((v as JsonObject)['name']).startsWith('kube-api-access-')), agentTokenVolume(), DATA_VOLUME];
  for (const container of arrayAt(pod, 'spec', 'containers') as JsonObject[]) {
    container['volumeMounts'] = ((container['volumeMounts'] ?? []) as JsonObject[]).filter((m) => !String(m['name']).startsWith('kube-api-access-'));
  }
  arrayAt(pod, 'spec', 'containers').push(agent);
  spec['automountServiceAccountToken'] = false;
  return pod;
}

describe('sidecar injection of an opted-in pod', () => {
  it.each(['v1-pod-opted-in', 'v1beta1-pod-opted-in'])('%s: appends the agent and writes the status annotation', (name) => {
    const review = loadReview(name);
    const outcome = run(review);
    expect(outcome.reply.apiVersion).toBe(review.apiVersion);
    expect(outcome.reply.response).toMatchObject({
      uid: review.request.uid,
      allowed: true,
      patchType: 'JSONPatch',
      auditAnnotations: { decision: 'injected' },
    });
    expect(outcome.reply.response.warnings).toBeUndefined();
    // The ServiceAccount plugin's token leaves every container (mounts, then its volume); the agent gets its own.
    expect(patchOf(outcome)).toEqual([
      { op: 'remove', path: '/spec/volumes/0' },
      { op: 'remove', path: '/spec/containers/0/volumeMounts/0' },
      { op: 'remove', path: '/spec/containers/1/volumeMounts/0' },
      { op: 'add', path: '/spec/containers/2', value: ORDERS_AGENT },
      { op: 'add', path: '/spec/volumes/0', value: agentTokenVolume() },
      { op: 'add', path: '/spec/volumes/1', value: DATA_VOLUME },
      { op: 'add', path: '/spec/automountServiceAccountToken', value: false },
      { op: 'add', path: '/metadata/annotations/xxl-agent~1status', value: STATUS },
    ]);

    const expected = withAgentOnlyToken(requestObject(loadReview(name)), ORDERS_AGENT);
    objectAt(expected, 'metadata', 'annotations')['xxl-agent/status'] = STATUS;
    expect(patched(review, outcome)).toStrictEqual(expected);
  });

  it('leaves the request object itself untouched', () => {
    const review = loadReview('v1-pod-opted-in');
    run(review);
    expect(review).toStrictEqual(loadReview('v1-pod-opted-in'));
  });

  it('handles a Deployment-made pod: generateName, ownerReferences, namespace only in the request', () => {
    const review = loadReview('v1-deployment-pod');
    expect(objectAt(requestObject(review), 'metadata')['namespace']).toBeUndefined();
    const outcome = run(review);
    expect(outcome.decision).toBe('injected');
    expect(patchOf(outcome).find((op) => op.path === '/spec/containers/1')).toEqual({
      op: 'add',
      path: '/spec/containers/1',
      value: xxlAgent('https://xxl-job.jobs.svc.cluster.local/xxl-job-admin', 'settlement', 'settlement-nightly', AGENT_TOKEN_VOLUME),
    });
    const pod = patched(review, outcome);
    expect(objectAt(pod, 'metadata')['ownerReferences']).toEqual(objectAt(requestObject(review), 'metadata')['ownerReferences']);
    expect(objectAt(pod, 'metadata')['generateName']).toBe('settlement-6d8f7c9b54-');
  });

  it('appends to containers, not initContainers, and keeps existing init containers as they are', () => {
    const review = loadReview('v1-pod-init-containers');
    const outcome = run(review);
    // The pod turned its own token off: nothing to remove, the agent gets its own.
    expect(patchOf(outcome).map(({ op, path }) => `${op} ${path}`)).toEqual([
      'add /spec/containers/1',
      'add /spec/volumes/2',
      'add /spec/volumes/3',
      'add /metadata/annotations/xxl-agent~1status',
    ]);
    expect(arrayAt(patched(review, outcome), 'spec', 'initContainers')).toEqual(arrayAt(requestObject(review), 'spec', 'initContainers'));
  });

  it('preserves fields it does not know, including keys with / and ~', () => {
    const review = loadReview('v1-pod-unknown-fields');
    const outcome = run(review);
    expect(patchOf(outcome).map(({ op, path }) => `${op} ${path}`)).toEqual([
      'add /spec/containers/1',
      'add /spec/automountServiceAccountToken',
      'add /spec/volumes',
      'add /metadata/annotations/xxl-agent~1status',
    ]);
    const pod = patched(review, outcome);
    const original = requestObject(review);
    expect(objectAt(pod, 'spec')['futureSpecField']).toEqual({ 'with/slash': 1, 'with~tilde': 2, 'with~1both/': 3 });
    expect(objectAt(pod, 'metadata')['futureMetadataField']).toEqual(objectAt(original, 'metadata')['futureMetadataField']);
    expect(arrayAt(pod, 'spec', 'initContainers')).toEqual(arrayAt(original, 'spec', 'initContainers'));
    expect(arrayAt(pod, 'spec', 'containers')[0]).toEqual(arrayAt(original, 'spec', 'containers')[0]);
    expect(objectAt(pod, 'status')).toEqual({ futureStatusField: true });
  });

  it('claims the pods an internal error must not admit unchecked: opted in, or carrying an agent status annotation or an agent-named container; no other, and none in a protected namespace', () => {
    const extension = sidecarExtension({ profiles: [XXL_JOB_PROFILE], injectorVersion: 'test' });
    const claim = (review: AdmissionReview) => extension.claims?.(requestObject(review), admissionContext(review.request));
    expect(claim(loadReview('v1-pod-opted-in'))).toBe('opts into an agent');
    expect(claim(withAnnotations(loadReview('v1-pod-opted-in'), { 'xxl-agent/enable': null, 'outrigger.dev/inject': 'xxl-job' }))).toBe('opts into an agent');
    expect(claim(withAnnotations(loadReview('v1-pod-already-injected'), { 'xxl-agent/enable': null }))).toBe('carries an agent status annotation');
    const named = loadReview('v1-pod-no-annotations');
    (requestObject(named)['spec'] as { containers: JsonObject[] }).containers.push({ name: 'xxl-agent', image: 'busybox' });
    expect(claim(named)).toBe('carries a container named like an agent');
    expect(claim(loadReview('v1-pod-no-annotations'))).toBeUndefined();
    expect(claim(inNamespace(loadReview('v1-pod-opted-in'), 'kube-system'))).toBeUndefined();
  });

  it.each(['initContainers', 'volumes', 'imagePullSecrets'])('refuses an opted-in pod whose spec.%s is not a list (no API server sends one), never failing internally', (list) => {
    for (const value of [null, 1, 'x', true, {}]) {
      const review = loadReview('v1-pod-opted-in');
      (requestObject(review)['spec'] as JsonObject)[list] = value;
      const outcome = run(review);
      expect(outcome.failure).toBeUndefined();
      expect(outcome.decision).toBe('denied:invalid-pod-spec');
      expect(outcome.reply.response.status).toMatchObject({ code: 400, message: `spec.${list} is not a list` });
    }
  });

  it('refuses annotations under the prefix that the profile does not define, naming them and those it knows, before any other check', () => {
    const outcome = run(withAnnotations(loadReview('v1-pod-opted-in'), { 'xxl-agent/job-adress': 'http://typo.example', 'xxl-agent/limits.memroy': '64Mi' }));
    expect(outcome.decision).toBe('denied:unknown-annotation');
    expect(outcome.reply.response.status).toMatchObject({
      code: 422,
      message:
        'annotations xxl-agent/job-adress, xxl-agent/limits.memroy: profile xxl-job defines no such annotation (under xxl-agent/ it knows enable, job-addr, job-name, keep-pod-token, limits.cpu, limits.memory, native-sidecar, requests.cpu, requests.memory, status, target-container); correct or remove it',
    });
    // A misspelt required parameter: the misspelling is named, not only the missing parameter.
    const misspelt = run(withAnnotations(loadReview('v1-pod-opted-in'), { 'xxl-agent/job-addr': null, 'xxl-agent/job-adr': 'http://x.example' }));
    expect(misspelt.reply.response.status?.message).toMatch(/^annotation xxl-agent\/job-adr: profile xxl-job defines no such annotation/);
  });

  it('is opted in through outrigger.dev/inject as well, tolerating spaces and empty entries', () => {
    const review = withAnnotations(loadReview('v1-pod-opted-in'), { 'xxl-agent/enable': null, 'outrigger.dev/inject': ' xxl-job ,, ' });
    const outcome = run(review);
    expect(outcome.decision).toBe('injected');
    expect(patchOf(outcome).find((op) => op.path === '/spec/containers/2')).toEqual({ op: 'add', path: '/spec/containers/2', value: ORDERS_AGENT });
  });

  it.each(['1', 't', 'T', 'TRUE', 'true', 'True'])('accepts enable=%s', (value) => {
    expect(run(withAnnotations(loadReview('v1-pod-opted-in'), { 'xxl-agent/enable': value })).decision).toBe('injected');
  });

  it('behaves the same for a dry run', () => {
    const dry = run(loadReview('v1-pod-dry-run'));
    const real = run(loadReview('v1-pod-opted-in'));
    expect(dry.decision).toBe('injected');
    expect(dry.reply.response.patch).toBe(real.reply.response.patch);
  });

  it('handles a 1.5 MiB pod and sends only the small patch', () => {
    const review = loadReview('v1-pod-opted-in');
    const huge = inflatePod(requestObject(review), 1.5 * 1024 * 1024);
    expect(JSON.stringify(huge).length).toBeGreaterThanOrEqual(1.5 * 1024 * 1024);
    const hugeReview: AdmissionReview = { ...review, request: { ...review.request, object: huge } };
    const outcome = run(hugeReview);
    expect(outcome.decision).toBe('injected');
    expect(patchOf(outcome)).toHaveLength(8);
    expect(JSON.stringify(outcome.reply).length).toBeLessThan(4096);
    const expected = withAgentOnlyToken(structuredClone(huge), ORDERS_AGENT);
    objectAt(expected, 'metadata', 'annotations')['xxl-agent/status'] = STATUS;
    expect(patched(hugeReview, outcome)).toEqual(expected);
  });
});

describe('native sidecars and several profiles', () => {
  const tracingEnabled = { 'tracing.example.com/enable': 'true' };

  function tracingAgent(tokenVolume?: string): JsonObject {
    return {
      name: 'trace-agent',
      image: 'registry.example.com/observability/trace-agent:0.7.3',
      args: ['--listen=127.0.0.1:4317'],
      env: [
        { name: 'COLLECTOR_URL', value: 'http://otel-collector.observability:4317' },
        { name: 'SAMPLE_RATE', value: '0.1' },
        { name: 'POD_IP', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'status.podIP' } } },
        { name: 'APP_LABEL', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: "metadata.labels['app']" } } },
        { name: 'OTEL_EXPORTER_OTLP_PROTOCOL', value: 'grpc' },
      ],
      securityContext: { runAsNonRoot: true, allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] }, seccompProfile: { type: 'RuntimeDefault' } },
      restartPolicy: 'Always',
      ...(tokenVolume ? { volumeMounts: [{ name: tokenVolume, readOnly: true, mountPath: '/var/run/secrets/kubernetes.io/serviceaccount' }] } : {}),
    };
  }

  it('appends a native sidecar to the end of existing initContainers, with defaults filled in (its own token: the pod turned its own off)', () => {
    const review = withAnnotations(loadReview('v1-pod-init-containers'), { 'xxl-agent/enable': 'false', ...tracingEnabled });
    const outcome = run(review, twoProfiles());
    const tracing = twoProfiles()[1];
    if (!tracing) throw new Error('fixture has two profiles');
    expect(patchOf(outcome)).toEqual([
      { op: 'add', path: '/spec/initContainers/2', value: tracingAgent(AGENT_TOKEN_VOLUME) },
      { op: 'add', path: '/spec/volumes/2', value: agentTokenVolume() },
      {
        op: 'add',
        path: '/metadata/annotations/tracing.example.com~1status',
        value: JSON.stringify({ profile: 'tracing', hash: profileHash(tracing), version: VERSION }),
      },
    ]);
  });

  it('creates initContainers with one add when the pod has none', () => {
    const review = withAnnotations(loadReview('v1-pod-opted-in'), { 'xxl-agent/enable': '0', ...tracingEnabled });
    const outcome = run(review, twoProfiles());
    expect(patchOf(outcome)[0]).toEqual({ op: 'add', path: '/spec/initContainers', value: [tracingAgent('kube-api-access-7xk2p')] });
    expect(arrayAt(patched(review, outcome), 'spec', 'initContainers')).toEqual([tracingAgent('kube-api-access-7xk2p')]);
  });

  it('injects every requested profile in one patch; once one takes the pod\'s token away, every agent gets its own', () => {
    const review = withAnnotations(loadReview('v1-pod-opted-in'), tracingEnabled);
    const outcome = run(review, twoProfiles());
    expect(patchOf(outcome).map(({ op, path }) => `${op} ${path}`)).toEqual([
      'remove /spec/volumes/0',
      'remove /spec/containers/0/volumeMounts/0',
      'remove /spec/containers/1/volumeMounts/0',
      'add /spec/containers/2',
      'add /spec/volumes/0',
      'add /spec/volumes/1',
      'add /spec/automountServiceAccountToken',
      'add /spec/initContainers',
      'add /metadata/annotations/xxl-agent~1status',
      'add /metadata/annotations/tracing.example.com~1status',
    ]);
    expect(arrayAt(patched(review, outcome), 'spec', 'initContainers')).toEqual([tracingAgent(AGENT_TOKEN_VOLUME)]);
  });

  it('injects only the profile that is not there yet', () => {
    const review = withAnnotations(loadReview('v1-pod-already-injected'), tracingEnabled);
    const outcome = run(review, twoProfiles());
    expect(patchOf(outcome).map(({ path }) => path)).toEqual(['/spec/initContainers', '/metadata/annotations/tracing.example.com~1status']);
  });
});

describe('pods that are left alone', () => {
  it('skips a pod without annotations', () => {
    const outcome = run(loadReview('v1-pod-no-annotations'));
    expect(outcome.reply.response).toEqual({
      uid: '1a2b3c4d-0000-4e5f-8a9b-aabbccddeeff',
      allowed: true,
      auditAnnotations: { decision: 'skipped:not-opted-in' },
    });
  });

  it.each(['0', 'f', 'F', 'FALSE', 'false', 'False'])('skips enable=%s', (value) => {
    const outcome = run(withAnnotations(loadReview('v1-pod-opted-in'), { 'xxl-agent/enable': value }));
    expect(outcome.decision).toBe('skipped:not-opted-in');
    expect(outcome.reply.response.patch).toBeUndefined();
  });

  it('lets an explicit enable=false win over the inject list, with a warning', () => {
    const review = withAnnotations(loadReview('v1-pod-opted-in'), { 'xxl-agent/enable': 'false', 'outrigger.dev/inject': 'xxl-job' });
    const outcome = run(review);
    expect(outcome.decision).toBe('skipped:not-opted-in');
    expect(outcome.reply.response.warnings).toEqual(['profile xxl-job is named in outrigger.dev/inject but xxl-agent/enable is "false": not injected']);
  });

  it.each(['kube-system', 'kube-public', 'kube-node-lease', 'outrigger-system'])('never mutates a pod in protected namespace %s', (namespace) => {
    const review = inNamespace(loadReview('v1-pod-opted-in'), namespace);
    const outcome = run(review, [XXL_JOB_PROFILE], protectedNamespacesFor('outrigger-system'));
    expect(outcome.reply.response.patch).toBeUndefined();
    expect(outcome.reply.response.allowed).toBe(true);
    expect(outcome.decision).toBe('skipped:protected-namespace');
    expect(outcome.reply.response.warnings).toEqual([`namespace ${namespace} is protected: outrigger never injects sidecars there`]);
  });

  it('protects the system namespaces by default, even for invalid opt-ins', () => {
    const review = withAnnotations(loadReview('v1-pod-kube-system'), { 'xxl-agent/enable': 'maybe' });
    expect(run(review).decision).toBe('skipped:protected-namespace');
  });

  it('does not warn in a protected namespace when the pod did not ask', () => {
    const outcome = run(inNamespace(loadReview('v1-pod-no-annotations'), 'kube-system'));
    expect(outcome.reply.response.warnings).toBeUndefined();
  });

  it('skips an already injected pod with an empty patch', () => {
    const outcome = run(loadReview('v1-pod-already-injected'));
    expect(outcome.decision).toBe('skipped:already-injected');
    expect(outcome.reply.response.patch).toBeUndefined();
  });

  it('refuses an opted-in pod that forges the agent: the status annotation alone, its own agent container, an impostor', () => {
    const statusOnly = run(withAnnotations(loadReview('v1-pod-opted-in'), { 'xxl-agent/status': '{"profile":"xxl-job"}' }));
    expect(statusOnly.decision).toBe('denied:forged-agent');
    expect(statusOnly.reply.response.status?.code).toBe(422);
    expect(statusOnly.reply.response.status?.message).toContain(
      'profile xxl-job: annotation xxl-agent/status is set but the pod has no xxl-agent container; only the injector writes it (remove the annotation)',
    );
    const impostor = loadReview('v1-pod-init-containers');
    arrayAt(requestObject(impostor), 'spec', 'initContainers').push({ name: 'xxl-agent', image: 'docker.io/mallory/shell' });
    expect(run(impostor).reply.response.status?.message).toContain(
      'container xxl-agent has the name of the profile\'s agent but is not it (image "docker.io/mallory/shell" in initContainers; the agent is ghcr.io/outrigger/xxl-agent:0.1.0 in containers); rename the container',
    );
    const ownAgent = loadReview('v1-pod-opted-in');
    arrayAt(requestObject(ownAgent), 'spec', 'containers').push({ name: 'xxl-agent', image: 'ghcr.io/outrigger/xxl-agent:0.1.0', command: ['sh'] });
    expect(run(ownAgent).reply.response.status?.message).toContain('the pod brings its own xxl-agent container; the injector adds the agent (remove the container)');
  });

  it('refuses a forged agent in a pod that did not opt in, so an opt-in added later cannot get it bound', () => {
    const review = withAnnotations(loadReview('v1-pod-no-annotations'), { 'xxl-agent/status': '{"profile":"xxl-job"}' });
    arrayAt(requestObject(review), 'spec', 'containers').push({ name: 'xxl-agent', image: 'ghcr.io/outrigger/xxl-agent:6.6.6', command: ['sh'] });
    const { code, message, decision } = denial(run(review));
    expect({ code, decision }).toEqual({ code: 422, decision: 'denied:forged-agent' });
    expect(message).toBe(
      'profile xxl-job: the pod carries annotation xxl-agent/status and a xxl-agent container that is not the injector\'s (volume outrigger-agent-token is not what the injector writes); remove both and opt in with xxl-agent/enable: "true" so that the injector adds the agent (if nobody wrote them, a mutating webhook called after Outrigger\'s changed the agent: keep container xxl-agent out of its reach, or give the profile the value it sets)',
    );
    const containerOnly = loadReview('v1-pod-no-annotations');
    arrayAt(requestObject(containerOnly), 'spec', 'containers').push({ name: 'xxl-agent', image: 'ghcr.io/outrigger/xxl-agent:0.1.0' });
    expect(denial(run(containerOnly)).message).toContain('the pod brings its own xxl-agent container; the injector adds the agent (remove the container)');
  });

  it('takes a copy of an injected pod as injected only when its agent is exactly the rendering, opted in or not', () => {
    const older = loadReview('v1-pod-already-injected');
    objectAt(arrayAt(requestObject(older), 'spec', 'containers')[2] as JsonObject)['image'] = 'ghcr.io/outrigger/xxl-agent:0.9.0';
    expect(denial(run(older)).message).toBe(
      'profile xxl-job: the pod carries annotation xxl-agent/status and a xxl-agent container that is not the injector\'s (container xxl-agent: image is not what the injector renders); remove both and opt in with xxl-agent/enable: "true" so that the injector adds the agent (if nobody wrote them, a mutating webhook called after Outrigger\'s changed the agent: keep container xxl-agent out of its reach, or give the profile the value it sets)',
    );
    // A registry mirror's webhook, called after ours, moved the agent to another repository.
    const mirrored = loadReview('v1-pod-already-injected');
    objectAt(arrayAt(requestObject(mirrored), 'spec', 'containers')[2] as JsonObject)['image'] = 'mirror.example/outrigger/xxl-agent:0.1.0';
    expect(denial(run(mirrored)).message).toContain("a xxl-agent container that is not the injector's (container xxl-agent: image is not what the injector renders)");
    const notOptedIn = withAnnotations(loadReview('v1-pod-already-injected'), { 'xxl-agent/enable': null });
    expect(run(notOptedIn).decision).toBe('skipped:not-opted-in');
  });

  it.each(['hostNetwork', 'hostPID', 'hostIPC'])('refuses an opted-in pod with spec.%s unless the profile allows the node\'s namespaces', (field) => {
    const review = loadReview('v1-pod-opted-in');
    objectAt(requestObject(review), 'spec')[field] = true;
    const { code, message, decision } = denial(run(review));
    expect({ code, decision }).toEqual({ code: 403, decision: 'denied:host-namespace' });
    expect(message).toMatch(new RegExp(`^the pod sets spec\\.${field}: true and .*; profile xxl-job does not set spec\\.dangerouslyAllowHostNamespaces: true \\(remove spec\\.${field} or the opt-in\\)$`));
    // The node's processes could read an agentOnly token: allowed the node's namespaces, a hostPID pod is refused for that instead.
    const allowed = run(review, [{ ...XXL_JOB_PROFILE, dangerouslyAllowHostNamespaces: true }]);
    expect(allowed.decision).toBe(field === 'hostPID' ? 'denied:agent-token-shared' : 'injected');
    if (field === 'hostPID') expect(denial(allowed).message).toContain("spec.hostPID is true: other containers could read the agent's token through the node's processes");
    expect(run(review, [{ ...XXL_JOB_PROFILE, dangerouslyAllowHostNamespaces: true, serviceAccountToken: { agentOnly: false, podMayKeepToken: false } }]).decision).toBe('injected');
    expect(run(withAnnotations(review, { 'xxl-agent/enable': 'false' })).decision).toBe('skipped:not-opted-in');
  });

  it('refuses an opted-in pod in which the agentOnly token would not stay the agent\'s, naming the profile and the field', () => {
    const shared = loadReview('v1-pod-opted-in');
    objectAt(requestObject(shared), 'spec')['shareProcessNamespace'] = true;
    const { code, message, decision } = denial(run(shared));
    expect({ code, decision }).toEqual({ code: 403, decision: 'denied:agent-token-shared' });
    expect(message).toBe(
      "profile xxl-job gives the API token to its agent alone (spec.serviceAccountToken.agentOnly), but spec.shareProcessNamespace is true: other containers could read the agent's token; remove that from the pod",
    );
    const ownToken = loadReview('v1-pod-opted-in');
    arrayAt(requestObject(ownToken), 'spec', 'volumes').push({ name: 'mine', projected: { sources: [{ serviceAccountToken: { path: 'token' } }] } });
    expect(denial(run(ownToken)).message).toContain("but volume mine projects a ServiceAccount token besides the agent's");
  });

  it('yields an empty patch when reinvoked on its own output (reinvocationPolicy IfNeeded)', () => {
    for (const name of ['v1-pod-opted-in', 'v1-deployment-pod', 'v1-pod-init-containers', 'v1-pod-unknown-fields']) {
      const review = loadReview(name);
      const first = run(review);
      const again: AdmissionReview = { ...review, request: { ...review.request, object: patched(review, first) } };
      const second = run(again);
      expect(second.decision).toBe('skipped:already-injected');
      expect(second.reply.response.patch).toBeUndefined();
    }
  });

  it('skips a pod without containers and lets the API server reject it', () => {
    const review = loadReview('v1-pod-opted-in');
    objectAt(requestObject(review), 'spec')['containers'] = [];
    expect(run(review).decision).toBe('skipped:invalid-pod-spec');
  });
});

describe('invalid opt-ins are denied with a precise message', () => {
  const GO_BOOLS = '1, t, T, TRUE, true, True, 0, f, F, FALSE, false, False';

  it.each<[string, Record<string, string | null>, number, string, string]>([
    ['enable is not a Go boolean', { 'xxl-agent/enable': 'yes' }, 400, `annotation xxl-agent/enable: invalid boolean "yes" (use one of ${GO_BOOLS})`, 'denied:invalid-annotation'],
    ['enable has spaces', { 'xxl-agent/enable': ' true' }, 400, `annotation xxl-agent/enable: invalid boolean " true" (use one of ${GO_BOOLS})`, 'denied:invalid-annotation'],
    ['unknown profile in the inject list', { 'outrigger.dev/inject': 'xxl-job,istio' }, 400, 'annotation outrigger.dev/inject: unknown profile "istio" (known profiles: xxl-job)', 'denied:invalid-annotation'],
    ['missing job address', { 'xxl-agent/job-addr': null }, 422, 'annotation xxl-agent/job-addr is required', 'denied:missing-parameter'],
    ['empty job address', { 'xxl-agent/job-addr': '' }, 422, 'annotation xxl-agent/job-addr is required', 'denied:missing-parameter'],
    ['missing job name', { 'xxl-agent/job-name': null }, 422, 'annotation xxl-agent/job-name is required', 'denied:missing-parameter'],
    ['job address not a URL', { 'xxl-agent/job-addr': 'xxl-job-admin:8080' }, 422, 'annotation xxl-agent/job-addr: value "xxl-job-admin:8080" is not an http(s) URL', 'denied:invalid-parameter'],
    ['job address not http', { 'xxl-agent/job-addr': 'ftp://files.example.com' }, 422, 'annotation xxl-agent/job-addr: value "ftp://files.example.com" is not an http(s) URL', 'denied:invalid-parameter'],
    ['target is not a container', { 'xxl-agent/target-container': 'api' }, 422, 'annotation xxl-agent/target-container: value "api" does not name a container of the pod (containers: orders, metrics-exporter)', 'denied:invalid-parameter'],
    ['target names the agent itself', { 'xxl-agent/target-container': 'xxl-agent' }, 422, 'annotation xxl-agent/target-container: value "xxl-agent" does not name a container of the pod (containers: orders, metrics-exporter)', 'denied:invalid-parameter'],
  ])('%s', (_name, changes, code, message, decision) => {
    const outcome = run(withAnnotations(loadReview('v1-pod-opted-in'), changes));
    expect(denial(outcome)).toEqual({ code, message, decision });
    expect(outcome.reply.response.auditAnnotations).toEqual({ decision });
  });

  it('does not accept an init container as the target', () => {
    const review = withAnnotations(loadReview('v1-pod-init-containers'), { 'xxl-agent/target-container': 'fetch-templates' });
    expect(denial(run(review)).message).toBe(
      'annotation xxl-agent/target-container: value "fetch-templates" does not name a container of the pod (containers: builder)',
    );
  });

  it('truncates a long value in the message', () => {
    const outcome = run(withAnnotations(loadReview('v1-pod-opted-in'), { 'xxl-agent/job-addr': `mailto:${'x'.repeat(300)}` }));
    expect(denial(outcome).message).toBe(`annotation xxl-agent/job-addr: value "mailto:${'x'.repeat(57)}…" is not an http(s) URL`);
  });

  it('refuses a value too long to check', () => {
    const outcome = run(withAnnotations(loadReview('v1-pod-opted-in'), { 'xxl-agent/job-name': 'j'.repeat(5000) }));
    expect(denial(outcome).message).toBe(`annotation xxl-agent/job-name: value "${'j'.repeat(64)}…" is longer than 4096 characters`);
  });

  it('checks patterns with anchored semantics', () => {
    const profiles = twoProfiles();
    const deniedRate = run(withAnnotations(loadReview('v1-pod-no-annotations'), { 'tracing.example.com/enable': 'true', 'tracing.example.com/sample-rate': '0.5x' }), profiles);
    expect(denial(deniedRate).message).toBe('annotation tracing.example.com/sample-rate: value "0.5x" does not match the pattern ^(?:0(\\.[0-9]+)?|1(\\.0+)?)$');
    const prefixOnly = run(withAnnotations(loadReview('v1-pod-no-annotations'), { 'tracing.example.com/enable': 'true', 'tracing.example.com/sample-rate': '10' }), profiles);
    expect(denial(prefixOnly).code).toBe(422);
    const accepted = run(withAnnotations(loadReview('v1-pod-no-annotations'), { 'tracing.example.com/enable': 'true', 'tracing.example.com/sample-rate': '0.25' }), profiles);
    expect(accepted.decision).toBe('injected');
  });

  it('denies a non-string annotation value it has to read', () => {
    const review = loadReview('v1-pod-opted-in');
    objectAt(requestObject(review), 'metadata', 'annotations')['xxl-agent/enable'] = true;
    expect(denial(run(review))).toEqual({ code: 400, message: 'annotation xxl-agent/enable must be a string', decision: 'denied:invalid-annotation' });
  });

  it('denies before looking at parameters when the opt-in itself is malformed', () => {
    const review = withAnnotations(loadReview('v1-pod-opted-in'), { 'xxl-agent/enable': 'on', 'xxl-agent/job-addr': null });
    expect(denial(run(review)).code).toBe(400);
  });
});
