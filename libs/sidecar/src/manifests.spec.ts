import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { isJsonObject, type JsonObject } from '@outrigger/admission';
import { injectManifests, uninjectManifests, type InjectManifestsOptions } from './manifests.js';
import { parseProfiles, profileHash, REFERENCE_PROFILE_FILE, referenceProfile } from '@outrigger/agent-profiles';
import { loadTextFixture } from './testing/fixtures.js';
import { arrayAt, objectAt } from './testing/pods.js';
import { agentTokenVolume } from './service-account-token.js';

const XXL_JOB_PROFILE = referenceProfile();

const OPTIONS: InjectManifestsOptions = { profiles: [XXL_JOB_PROFILE], injectorVersion: '0.1.0' };
const DATA_VOLUMES = XXL_JOB_PROFILE.volumes ?? [];
const STATUS = JSON.stringify({ profile: 'xxl-job', hash: profileHash(XXL_JOB_PROFILE), version: '0.1.0', automountOff: true, volumes: DATA_VOLUMES.map((v) => v.name) });

function inject(text: string, options: InjectManifestsOptions = OPTIONS) {
  const result = injectManifests(text, options);
  if (!result.ok) throw new Error(result.error);
  return result.value;
}

function documents(text: string): JsonObject[] {
  return YAML.parseAllDocuments(text).map((document) => document.toJS() as JsonObject);
}

/** The text of each document as split on `---` lines, to compare untouched documents byte for byte. */
function chunks(text: string): string[] {
  return text.split(/^---\n/m);
}

describe('injectManifests', () => {
  const shop = loadTextFixture('manifests/shop.yaml');

  it('injects into opted-in workloads and reports every document', () => {
    const result = inject(shop);
    expect(result.documents.map(({ index, kind, name, decision }) => `${index} ${kind} ${name} ${decision}`)).toEqual([
      '0 Namespace shop passed-through',
      '1 Deployment orders injected',
      '2 Service orders passed-through',
      '3 CronJob export injected',
      '4 Job migrate skipped:not-opted-in',
      '5 undefined undefined passed-through',
      '6 ConfigMap orders-config passed-through',
    ]);
    // The CronJob's pods run to completion: its agent is a native sidecar, nothing to warn about.
    expect(result.warnings).toEqual([]);
  });

  it('reports objects with a pod template of a kind it does not edit as unsupported, and leaves them byte-identical', () => {
    const text = loadTextFixture('manifests/unsupported-kinds.yaml');
    const result = inject(text);
    expect(result.documents.map(({ kind, name, decision }) => `${kind} ${name} ${decision}`)).toEqual([
      'Rollout orders skipped:unsupported-kind',
      'PodTemplate batch-worker skipped:unsupported-kind',
      'Deployment legacy skipped:unsupported-kind',
      'Service orders passed-through',
    ]);
    expect(result.yaml).toBe(text);
  });

  it('adds the agent container and status annotation to the Deployment template', () => {
    const deployment = documents(inject(shop).yaml)[1];
    const template = objectAt(deployment, 'spec', 'template');
    expect(arrayAt(template, 'spec', 'containers').map((c) => (isJsonObject(c) ? c['name'] : undefined))).toEqual(['orders', 'xxl-agent']);
    expect(objectAt(template, 'metadata', 'annotations')['xxl-agent/status']).toBe(STATUS);
    const agent = arrayAt(template, 'spec', 'containers')[1] as JsonObject;
    expect(agent['env']).toContainEqual({ name: 'CONTAINER_NAME', value: 'orders' });
    expect(agent['env']).toContainEqual({ name: 'POD_NAME', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.name' } } });
  });

  it('finds the CronJob template under spec.jobTemplate.spec.template (opted in by the inject list), where the agent is a native sidecar', () => {
    const cronJob = documents(inject(shop).yaml)[3];
    const template = objectAt(cronJob, 'spec', 'jobTemplate', 'spec', 'template');
    expect(arrayAt(template, 'spec', 'containers')).toHaveLength(1);
    expect(arrayAt(template, 'spec', 'initContainers')).toMatchObject([{ name: 'xxl-agent', restartPolicy: 'Always' }]);
    expect(objectAt(template, 'spec')['restartPolicy']).toBe('OnFailure');
  });

  it('changes nothing else in the documents it edits', () => {
    const before = documents(shop);
    const after = documents(inject(shop).yaml);
    expect(after).toHaveLength(before.length);
    const strip = (document: JsonObject | undefined, path: string[]): JsonObject => {
      const copy = structuredClone(document ?? {});
      const template = objectAt(copy, ...path);
      arrayAt(template, 'spec', 'containers').splice(1);
      // A run-to-completion template (the CronJob's) got its agent as a native sidecar.
      delete objectAt(template, 'spec')['initContainers'];
      delete objectAt(template, 'metadata', 'annotations')['xxl-agent/status'];
      // The agent's token (the reference profile is agentOnly): its volume, and the pod's own token off; its data volume.
      expect(objectAt(template, 'spec')['volumes']).toEqual([agentTokenVolume(), ...DATA_VOLUMES]);
      expect(objectAt(template, 'spec')['automountServiceAccountToken']).toBe(false);
      delete objectAt(template, 'spec')['volumes'];
      delete objectAt(template, 'spec')['automountServiceAccountToken'];
      return copy;
    };
    expect(strip(after[1], ['spec', 'template'])).toEqual(before[1]);
    expect(strip(after[3], ['spec', 'jobTemplate', 'spec', 'template'])).toEqual(before[3]);
  });

  it('keeps untouched documents byte for byte, and comments in edited ones', () => {
    const before = chunks(shop);
    const after = chunks(inject(shop).yaml);
    for (const index of [0, 2, 4, 5, 6]) expect(after[index]).toBe(before[index]);
    expect(after[1]).toContain('- name: orders # the application');
    expect(after[3]).toContain('# A nightly export that also runs jobs through the agent.');
  });

  it('is idempotent: injecting its own output changes nothing', () => {
    const once = inject(shop).yaml;
    const twice = inject(once);
    expect(twice.yaml).toBe(once);
    expect(twice.documents[1]?.decision).toBe('skipped:already-injected');
  });

  it('names the document, the annotation and the problem when a pod would be denied', () => {
    expect(injectManifests(loadTextFixture('manifests/invalid-job-addr.yaml'), OPTIONS)).toEqual({
      ok: false,
      error: 'document 1 (StatefulSet ledger): annotation xxl-agent/job-addr: value "ftp://files.example.com" is not an http(s) URL',
    });
  });

  it('treats an unparsable document as an error naming it', () => {
    const result = injectManifests('kind: ConfigMap\n---\nkind: [unclosed\n', OPTIONS);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error).toMatch(/^document 1: is not valid YAML \(/);
  });

  it('reports a workload without a pod template', () => {
    expect(injectManifests('apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec: {}\n', OPTIONS)).toEqual({
      ok: false,
      error: 'document 0 (Deployment web): spec.template is missing',
    });
  });

  it('injects into a bare Pod and uses its namespace for protection', () => {
    const pod = [
      'apiVersion: v1',
      'kind: Pod',
      'metadata:',
      '  name: worker',
      '  namespace: NAMESPACE',
      '  annotations:',
      '    xxl-agent/enable: "true"',
      '    xxl-agent/job-addr: http://xxl:8080',
      '    xxl-agent/target-container: app',
      '    xxl-agent/job-name: job',
      'spec:',
      '  containers: [{ name: app, image: app:1 }]',
      '',
    ].join('\n');
    expect(inject(pod.replace('NAMESPACE', 'shop')).documents[0]?.decision).toBe('injected');
    const system = inject(pod.replace('NAMESPACE', 'kube-system'));
    expect(system.documents[0]?.decision).toBe('skipped:protected-namespace');
    expect(system.yaml).toBe(pod.replace('NAMESPACE', 'kube-system'));
    expect(system.warnings).toEqual(['document 0 (Pod worker): namespace kube-system is protected: outrigger never injects sidecars there']);
  });

  it('handles every workload kind, and ignores look-alikes from other API groups', () => {
    const annotations = {
      'xxl-agent/enable': 'true',
      'xxl-agent/job-addr': 'http://xxl:8080',
      'xxl-agent/target-container': 'app',
      'xxl-agent/job-name': 'job',
    };
    const template = { metadata: { annotations }, spec: { containers: [{ name: 'app', image: 'app:1' }] } };
    const workloads = [
      { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' }, spec: { template } },
      { apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name: 's' }, spec: { template } },
      { apiVersion: 'apps/v1', kind: 'DaemonSet', metadata: { name: 'ds' }, spec: { template } },
      { apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: 'rs' }, spec: { template } },
      { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'j' }, spec: { template } },
      { apiVersion: 'batch/v1', kind: 'CronJob', metadata: { name: 'c' }, spec: { jobTemplate: { spec: { template } } } },
      { apiVersion: 'example.com/v1', kind: 'Deployment', metadata: { name: 'custom' }, spec: { template } },
    ];
    const text = workloads.map((workload) => YAML.stringify(workload)).join('---\n');
    expect(inject(text).documents.map((document) => document.decision)).toEqual([
      'injected',
      'injected',
      'injected',
      'injected',
      'injected',
      'injected',
      'skipped:unsupported-kind',
    ]);
  });

  it('appends a native sidecar to initContainers in a template', () => {
    const parsed = parseProfiles([readFileSync(REFERENCE_PROFILE_FILE, 'utf8'), loadTextFixture('profiles/tracing.yaml')].join('\n---\n'));
    if (!parsed.ok) throw new Error(parsed.error);
    const text = [
      'apiVersion: apps/v1',
      'kind: Deployment',
      'metadata: { name: web }',
      'spec:',
      '  template:',
      '    metadata:',
      '      annotations: { tracing.example.com/enable: "true" }',
      '    spec:',
      '      containers: [{ name: web, image: web:1 }]',
      '',
    ].join('\n');
    const deployment = documents(inject(text, { ...OPTIONS, profiles: parsed.value }).yaml)[0];
    const initContainers = arrayAt(deployment, 'spec', 'template', 'spec', 'initContainers');
    expect(initContainers).toHaveLength(1);
    expect(initContainers[0]).toMatchObject({ name: 'trace-agent', restartPolicy: 'Always' });
  });

  it('refuses to edit through a YAML alias instead of changing the anchored node too', () => {
    const text = [
      'apiVersion: apps/v1',
      'kind: Deployment',
      'metadata:',
      '  name: web',
      '  annotations: &agent',
      '    xxl-agent/enable: "true"',
      '    xxl-agent/job-addr: http://xxl:8080',
      '    xxl-agent/target-container: web',
      '    xxl-agent/job-name: job',
      'spec:',
      '  template:',
      '    metadata:',
      '      annotations: *agent',
      '    spec:',
      '      containers: [{ name: web, image: web:1 }]',
      '',
    ].join('\n');
    const result = injectManifests(text, OPTIONS);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error).toMatch(/^document 0 \(Deployment web\): cannot edit this YAML in place \(/);
  });

  it('reports an alias bomb instead of expanding it', () => {
    const levels = ['a: &a ["x","x","x","x","x","x","x","x","x","x"]'];
    for (let level = 1; level < 8; level += 1) {
      const previous = String.fromCharCode(96 + level);
      levels.push(`${String.fromCharCode(97 + level)}: &${String.fromCharCode(97 + level)} [${Array(10).fill(`*${previous}`).join(',')}]`);
    }
    const result = injectManifests(`kind: ConfigMap\n${levels.join('\n')}\n`, OPTIONS);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error).toMatch(/^document 0: cannot be read \(/);
  });

  it('keeps text without documents as it is', () => {
    expect(inject('# nothing here\n').yaml).toBe('# nothing here\n');
    expect(inject('').yaml).toBe('');
  });

  it('injects into the items of a List, as kubectl get -o yaml prints them, and a ReplicationController', () => {
    const result = inject(loadTextFixture('manifests/list.yaml'));
    expect(result.documents.map(({ index, item, kind, name, decision }) => `${index}.${item} ${kind} ${name} ${decision}`)).toEqual([
      '0.0 Deployment api injected',
      '0.1 Service api passed-through',
      '0.2 ReplicationController legacy injected',
    ]);
    const [list] = documents(result.yaml);
    const items = arrayAt(list, 'items') as JsonObject[];
    for (const i of [0, 2]) {
      const names = arrayAt(objectAt(items[i] as JsonObject, 'spec', 'template'), 'spec', 'containers').map((c) => (isJsonObject(c) ? c['name'] : undefined));
      expect(names).toContain('xxl-agent');
    }
  });
});

describe('injectManifests on a pod that holds the ServiceAccount plugin\'s token (kubectl get pod -o yaml)', () => {
  it('removes the token volume and mounts in the YAML, before adding the agent\'s', () => {
    const pod = [
      'apiVersion: v1',
      'kind: Pod',
      'metadata:',
      '  name: p',
      '  annotations: { xxl-agent/enable: "true", xxl-agent/job-addr: "http://admin:8080", xxl-agent/target-container: app, xxl-agent/job-name: j }',
      'spec:',
      '  containers:',
      '    - name: app',
      '      image: busybox',
      '      volumeMounts:',
      '        - { name: data, mountPath: /data }',
      '        - { name: kube-api-access-abcde, readOnly: true, mountPath: /var/run/secrets/kubernetes.io/serviceaccount }',
      '  volumes:',
      '    - { name: kube-api-access-abcde, projected: { sources: [] } }',
      '    - { name: data, emptyDir: {} }',
      '',
    ].join('\n');
    const spec = objectAt(documents(inject(pod).yaml)[0], 'spec');
    expect(spec['volumes']).toEqual([{ name: 'data', emptyDir: {} }, agentTokenVolume(), ...DATA_VOLUMES]);
    expect(spec['automountServiceAccountToken']).toBe(false);
    expect((arrayAt(spec, 'containers')[0] as JsonObject)['volumeMounts']).toEqual([{ name: 'data', mountPath: '/data' }]);
  });
});

describe('uninjectManifests', () => {
  const SHARED_TOKEN = { ...XXL_JOB_PROFILE, serviceAccountToken: { agentOnly: false, podMayKeepToken: false } };

  it.each(['manifests/shop.yaml', 'manifests/list.yaml'])('gives back exactly what was injected into (%s)', (fixture) => {
    const original = loadTextFixture(fixture);
    const injected = inject(original, { ...OPTIONS, profiles: [SHARED_TOKEN] }).yaml;
    expect(injected).not.toBe(original);
    const removed = uninjectManifests(injected, { profiles: [SHARED_TOKEN] });
    if (!removed.ok) throw new Error(removed.error);
    expect(removed.value.yaml).toBe(original);
  });

  it('gives back exactly what an agentOnly profile injected into: the token volume and the automount the injector set go', () => {
    const original = loadTextFixture('manifests/shop.yaml');
    const removed = uninjectManifests(inject(original).yaml, OPTIONS);
    expect(removed).toMatchObject({ ok: true, value: { yaml: original, warnings: [] } });
  });

  it('keeps automountServiceAccountToken: false where the template had it before injection', () => {
    const pod = 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  annotations:\n    xxl-agent/enable: "true"\n    xxl-agent/job-addr: http://admin:8080\n    xxl-agent/target-container: app\n    xxl-agent/job-name: j\nspec:\n  automountServiceAccountToken: false\n  containers:\n    - name: app\n      image: busybox\n';
    const injected = inject(pod).yaml;
    expect(injected).not.toContain('automountOff');
    expect(uninjectManifests(injected, OPTIONS)).toMatchObject({ ok: true, value: { yaml: pod } });
  });

  it('removes a native sidecar and the initContainers list it created', () => {
    const native = { ...SHARED_TOKEN, nativeSidecar: true };
    const pod = 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  annotations:\n    xxl-agent/enable: "true"\n    xxl-agent/job-addr: http://admin:8080\n    xxl-agent/target-container: app\n    xxl-agent/job-name: j\nspec:\n  containers:\n    - name: app\n      image: busybox\n';
    const injected = inject(pod, { ...OPTIONS, profiles: [native] }).yaml;
    expect(injected).toContain('initContainers');
    const removed = uninjectManifests(injected, { profiles: [native] });
    expect(removed.ok && removed.value.yaml).toBe(pod);
  });

  it('leaves documents without an injected agent byte for byte', () => {
    const text = loadTextFixture('manifests/shop.yaml');
    const removed = uninjectManifests(text, OPTIONS);
    expect(removed.ok && removed.value.yaml).toBe(text);
    expect(removed.ok && removed.value.documents.map((d) => d.decision)).toContain('skipped:not-injected');
  });
});
