import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { buildMutatingWebhookConfiguration } from '@outrigger/admission';
import { parseAgentProfile, referenceProfile } from '@outrigger/agent-profiles';
import { resolveBinaries, deployedMemoryLimit, INSTALL_NAMESPACE, intendedNamespace, KUSTOMIZATIONS, kustomizationFiles, render, type RenderedObject } from '@outrigger/control-plane';
import { certManagerPermissions, INSTALL_NAMES, INSTANCE_LABEL } from '@outrigger/install';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';

/* eslint-disable @typescript-eslint/no-explicit-any -- rendered manifests are untyped JSON */

let kubectl: string;
const rendered = new Map<string, RenderedObject[]>();

beforeAll(async () => {
  kubectl = join(await resolveBinaries(), 'kubectl');
  for (const path of KUSTOMIZATIONS) rendered.set(path, render(kubectl, path));
}, 300_000);

const objects = (path: string) => rendered.get(path) ?? [];
function find(path: string, kind: string, name: string): RenderedObject {
  const object = objects(path).find((o) => o.kind === kind && o.metadata.name === name);
  if (!object) throw new Error(`${path} renders no ${kind}/${name}`);
  return object;
}
const deployments = (path: string) => objects(path).filter((o) => o.kind === 'Deployment') as any[];

/** Every request a ServiceAccount of the install namespace may make by the RBAC `path` renders, as `verb group/resource[/name] in namespace|(cluster)`. */
function granted(path: string, serviceAccount: string): string[] {
  const bindings = objects(path).filter((o: any) => /^(Cluster)?RoleBinding$/.test(o.kind) && o.subjects.some((s: any) => s.kind === 'ServiceAccount' && s.name === serviceAccount && s.namespace === INSTALL_NAMESPACE)) as any[];
  return bindings.flatMap((binding) => {
    const scope = binding.kind === 'RoleBinding' ? binding.metadata.namespace : undefined;
    const role = objects(path).find((o) => o.kind === binding.roleRef.kind && o.metadata.name === binding.roleRef.name && o.metadata.namespace === (binding.roleRef.kind === 'Role' ? scope : undefined)) as any;
    if (!role) throw new Error(`${binding.kind} ${binding.metadata.name} refers to ${binding.roleRef.kind} ${binding.roleRef.name}, which ${path} does not render`);
    return role.rules.flatMap((r: any) =>
      r.apiGroups.flatMap((g: string) => r.resources.flatMap((res: string) => r.verbs.flatMap((v: string) => (r.resourceNames ?? [undefined]).map((n?: string) => `${v} ${g}/${res}${n ? `/${n}` : ''} in ${scope ?? '(cluster)'}`)))),
    );
  });
}

/**
 * The configuration the admission library builds for the shipped names (service mode), with the
 * `url: null` the manifest adds so an apply removes a url-mode registration's url.
 */
function expectedWebhook(failurePolicy?: 'Fail' | 'Ignore') {
  const built = buildMutatingWebhookConfiguration({ ...expectedWebhookOptions(), ...(failurePolicy ? { failurePolicy } : {}) });
  return { ...built, webhooks: built.webhooks.map((w) => ({ ...w, clientConfig: { ...w.clientConfig, url: null } })) };
}

/** The object without the metadata.labels the labels transformer adds. */
function withoutLabels(object: RenderedObject): unknown {
  const { labels: _labels, ...metadata } = object.metadata;
  return { ...object, metadata };
}

describe('deploy/ kustomizations', () => {
  it('finds every base and overlay', () => {
    expect(KUSTOMIZATIONS).toEqual(
      expect.arrayContaining(['base/injector', 'base/rbac-syncer', 'base/cert-manager', 'base/webhook', 'base/namespace', 'overlays/dev', 'overlays/prod']),
    );
  });

  it('uses the labels transformer, never the deprecated commonLabels', () => {
    for (const file of kustomizationFiles()) {
      const kustomization = parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
      expect(kustomization, file).not.toHaveProperty('commonLabels');
    }
  });

  it.each(KUSTOMIZATIONS)('%s renders, no cluster-scoped object with a namespace, every namespaced one in its own', (path) => {
    expect(objects(path).length).toBeGreaterThan(0);
    const placed = (namespace: (o: RenderedObject) => string | undefined) => objects(path).map((o) => `${o.kind}/${o.metadata.name} in ${namespace(o) ?? '(cluster)'}`);
    expect(placed((o) => o.metadata.namespace)).toEqual(placed(intendedNamespace));
  });

  it.each([
    ['overlays/dev', 'outrigger-dev'],
    ['overlays/local', 'outrigger-local'],
    ['overlays/prod', 'outrigger'],
    ['overlays/prod-mtls', 'outrigger'],
    ['overlays/prod-jetstack', 'outrigger'],
  ])("%s labels every object, its components' too, as installation %s", (path, instance) => {
    const labelled = (o: RenderedObject) => `${o.kind}/${o.metadata.name}: ${o.metadata.labels?.[INSTANCE_LABEL] ?? 'unlabelled'}`;
    expect(objects(path).map(labelled)).toEqual(objects(path).map((o) => `${o.kind}/${o.metadata.name}: ${instance}`));
  });

  it.each(['overlays/dev', 'overlays/prod', 'overlays/prod-mtls', 'overlays/prod-jetstack'])('%s: ships the CRD and exactly the reference AgentProfile, and no profiles ConfigMap', (path) => {
    const profiles = objects(path).filter((o) => o.kind === 'AgentProfile');
    expect(profiles.map((o) => parseAgentProfile(o))).toEqual([{ ok: true, value: referenceProfile() }]);
    expect(objects(path).filter((o) => o.kind === 'CustomResourceDefinition').map((o) => o.metadata.name)).toEqual(['agentprofiles.outrigger.dev']);
    expect(objects(path).filter((o) => o.kind === 'ConfigMap' && /profiles/.test(o.metadata.name))).toEqual([]);
  });

  it('no service mounts a profiles file: both read AgentProfiles through the API', () => {
    for (const path of ['base/injector', 'base/rbac-syncer']) {
      for (const d of deployments(path)) expect(d.spec.template.spec.containers[0].env.map((e: any) => e.name)).not.toContain('PROFILES_FILE');
    }
  });

  it('base/webhook is exactly what buildMutatingWebhookConfiguration builds for the default names', () => {
    const shipped = find('base/webhook', 'MutatingWebhookConfiguration', 'outrigger-injector');
    expect(withoutLabels(shipped)).toEqual(expectedWebhook());
    expect(shipped.metadata.annotations).toEqual({ 'outrigger.dev/inject-ca-from': 'outrigger-system/outrigger-injector-tls' });
  });

  it.each([
    ['overlays/dev', 'Ignore'],
    ['overlays/prod', 'Fail'],
  ] as const)('%s: the webhook is the builder output with failurePolicy %s', (path, failurePolicy) => {
    const shipped = find(path, 'MutatingWebhookConfiguration', 'outrigger-injector');
    expect(withoutLabels(shipped)).toEqual(expectedWebhook(failurePolicy));
  });

  it.each(KUSTOMIZATIONS.filter((path) => path.startsWith('overlays/') || path === 'base/webhook'))('%s: the forged-agent policy fails closed, whatever the webhook\'s failurePolicy', (path) => {
    const policy = find(path, 'ValidatingAdmissionPolicy', 'outrigger-forged-agent') as { spec?: { failurePolicy?: string } };
    expect(policy.spec?.failurePolicy).toBe('Fail');
  });

  it.each(KUSTOMIZATIONS)('%s: every container is non-root, read-only, drops ALL, has requests and limits', (path) => {
    for (const deployment of deployments(path)) {
      const pod = deployment.spec.template.spec;
      const where = `${path} ${deployment.metadata.name}`;
      expect(pod.securityContext.runAsNonRoot, where).toBe(true);
      expect(pod.securityContext.seccompProfile, where).toEqual({ type: 'RuntimeDefault' });
      expect(pod.terminationGracePeriodSeconds, where).toBeGreaterThan(0);
      for (const container of [...(pod.initContainers ?? []), ...pod.containers]) {
        const sc = container.securityContext;
        expect(sc.runAsNonRoot, where).toBe(true);
        expect(sc.readOnlyRootFilesystem, where).toBe(true);
        expect(sc.allowPrivilegeEscalation, where).toBe(false);
        expect(sc.capabilities.drop, where).toEqual(['ALL']);
        for (const kind of ['requests', 'limits']) {
          expect(container.resources?.[kind]?.cpu, `${where} ${kind}.cpu`).toBeDefined();
          expect(container.resources?.[kind]?.memory, `${where} ${kind}.memory`).toBeDefined();
        }
        expect(container.readinessProbe.httpGet.path, where).toBe('/readyz');
        expect(container.livenessProbe.httpGet.path, where).toBe('/healthz');
        const namespaceEnv = container.env.find((e: any) => e.name === 'POD_NAMESPACE');
        expect(namespaceEnv?.valueFrom?.fieldRef?.fieldPath, where).toBe('metadata.namespace');
      }
    }
  });

  it('the injector probes over HTTPS, mounts its serving Secret (not optional) and watches it too', () => {
    for (const path of ['base/injector', 'overlays/dev', 'overlays/prod', 'overlays/local', 'overlays/prod-jetstack']) {
      const deployment = find(path, 'Deployment', 'outrigger-injector') as any;
      const pod = deployment.spec.template.spec;
      const [container] = pod.containers;
      expect(container.readinessProbe.httpGet.scheme).toBe('HTTPS');
      expect(container.livenessProbe.httpGet.scheme).toBe('HTTPS');
      expect(pod.automountServiceAccountToken).toBe(true);
      expect(pod.volumes).toEqual(expect.arrayContaining([{ name: 'tls', secret: { secretName: 'outrigger-injector-tls', optional: false } }]));
      const env = Object.fromEntries(container.env.filter((e: any) => 'value' in e).map((e: any) => [e.name, e.value]));
      expect(env).toMatchObject({ PORT: '8443', TLS_CERT_FILE: '/etc/outrigger/tls/tls.crt', TLS_KEY_FILE: '/etc/outrigger/tls/tls.key', TLS_SECRET: 'outrigger-injector-tls' });
    }
  });

  it("the injector's RBAC: read its serving Secret by name, and list/watch AgentProfiles and namespaces; nothing else", () => {
    const rbac = objects('base/injector').filter((o) => /Role|Binding/.test(o.kind)) as any[];
    expect(rbac.map((o) => o.kind).sort()).toEqual(['ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding']);
    expect(rbac.find((o) => o.kind === 'Role').rules).toEqual([
      { apiGroups: [''], resources: ['secrets'], resourceNames: ['outrigger-injector-tls'], verbs: ['get', 'list', 'watch'] },
    ]);
    expect(rbac.find((o) => o.kind === 'ClusterRole').rules).toEqual([
      { apiGroups: ['outrigger.dev'], resources: ['agentprofiles'], verbs: ['list', 'watch'] },
      { apiGroups: [''], resources: ['namespaces'], verbs: ['list', 'watch'] },
    ]);
  });

  it("the cert-manager's RBAC grants exactly what it declares (libs/install certManagerPermissions): Events only in its namespace and in default", () => {
    const declared = certManagerPermissions({
      namespace: INSTALL_NAMES.namespace,
      secrets: [INSTALL_NAMES.caSecret, INSTALL_NAMES.servingSecret],
      webhooks: [INSTALL_NAMES.webhook],
      lease: { namespace: INSTALL_NAMES.namespace, name: INSTALL_NAMES.certManager },
    }).map((p) => `${p.verb} ${p.group}/${p.resource}${p.name ? `/${p.name}` : ''} in ${p.namespace ?? '(cluster)'}`);
    expect(granted('base/cert-manager', INSTALL_NAMES.certManager).sort()).toEqual([...new Set(declared)].sort());
  });

  it('each service has a memory limit the benches can run it under', () => {
    for (const app of ['injector', 'rbac-syncer', 'cert-manager'] as const) expect(deployedMemoryLimit(app)).toBeGreaterThanOrEqual(64 * 2 ** 20);
  });

  it('overlays set images through the images transformer', () => {
    const images = (path: string) => deployments(path).map((d) => d.spec.template.spec.containers[0].image).sort();
    expect(images('overlays/dev')).toEqual(['ghcr.io/outrigger/cert-manager:dev', 'ghcr.io/outrigger/injector:dev', 'ghcr.io/outrigger/rbac-syncer:dev']);
    expect(images('overlays/prod')).toEqual(['ghcr.io/outrigger/cert-manager:0.1.0', 'ghcr.io/outrigger/injector:0.1.0', 'ghcr.io/outrigger/rbac-syncer:0.1.0']);
  });

  it('dev logs at debug level and pulls its re-pushed :dev images on every start; prod runs 2+ replicas, PriorityClass outrigger-critical and network policies, with no API server flags needed', () => {
    for (const d of deployments('overlays/dev')) {
      expect(d.spec.replicas).toBe(1);
      expect(d.spec.template.spec.containers[0].env).toContainEqual({ name: 'LOG_LEVEL', value: 'debug' });
      for (const c of d.spec.template.spec.containers) expect(c.imagePullPolicy, `${d.metadata.name} ${c.name}`).toBe('Always');
    }
    for (const d of deployments('overlays/prod')) {
      expect(d.spec.replicas).toBeGreaterThanOrEqual(2);
      expect(d.spec.template.spec.containers[0].env.map((e: any) => e.name)).not.toContain('LOG_LEVEL');
      // The webhook fails closed: its services are not the first to be preempted.
      expect(d.spec.template.spec.priorityClassName).toBe('outrigger-critical');
    }
    expect(find('overlays/prod', 'PriorityClass', 'outrigger-critical')).toMatchObject({ value: 1_000_000, globalDefault: false });
    expect(objects('overlays/prod').filter((o) => o.kind === 'NetworkPolicy').length).toBeGreaterThan(0);
    const injector = find('overlays/prod', 'Deployment', 'outrigger-injector') as any;
    expect(injector.spec.template.spec.containers[0].env.map((e: any) => e.name)).not.toContain('CLIENT_CA_FILE');
  });

  it.each(['overlays/prod', 'overlays/local'])('%s: each replica goes only to a node with the fewest of its revision among those it may run on, one node enough', (path) => {
    for (const d of deployments(path)) {
      expect(d.spec.template.spec.topologySpreadConstraints, d.metadata.name).toContainEqual({
        maxSkew: 1,
        topologyKey: 'kubernetes.io/hostname',
        whenUnsatisfiable: 'DoNotSchedule',
        nodeTaintsPolicy: 'Honor',
        matchLabelKeys: ['pod-template-hash'],
        labelSelector: { matchLabels: d.spec.selector.matchLabels },
      });
    }
  });

  it('prod-mtls is prod plus mutual TLS on the injector, nothing else', () => {
    const injector = find('overlays/prod-mtls', 'Deployment', 'outrigger-injector') as any;
    expect(injector.spec.template.spec.containers[0].env).toContainEqual({ name: 'CLIENT_CA_FILE', value: '/etc/outrigger/client-ca/ca.crt' });
    expect(injector.spec.template.spec.volumes).toContainEqual({ name: 'client-ca', secret: { secretName: 'outrigger-injector-client-ca', optional: false } });
    const key = (o: any) => `${o.kind}/${o.metadata.name}`;
    const prod = new Map(objects('overlays/prod').map((o) => [key(o), JSON.stringify(o)]));
    const mtls = objects('overlays/prod-mtls');
    expect(mtls.map(key).sort()).toEqual([...prod.keys()].sort());
    expect(mtls.filter((o) => prod.get(key(o)) !== JSON.stringify(o)).map(key)).toEqual(['Deployment/outrigger-injector']);
  });

  it('prod-jetstack is prod without any object of Outrigger\'s cert-manager, plus the Issuer chain and the cainjector annotation', () => {
    const key = (o: any) => `${o.kind}/${o.metadata.name}`;
    const prod = new Map(objects('overlays/prod').map((o) => [key(o), o]));
    const jetstack = objects('overlays/prod-jetstack');
    const ownCertManager = objects('overlays/prod').filter((o) => o.metadata.labels?.['app.kubernetes.io/component'] === 'cert-manager').map(key).sort();
    expect(ownCertManager).toEqual([
      'ClusterRole/outrigger-cert-manager',
      'ClusterRoleBinding/outrigger-cert-manager',
      'Deployment/outrigger-cert-manager',
      'PodDisruptionBudget/outrigger-cert-manager',
      'Role/outrigger-cert-manager',
      'Role/outrigger-cert-manager-events',
      'RoleBinding/outrigger-cert-manager',
      'RoleBinding/outrigger-cert-manager-events',
      'Service/outrigger-cert-manager-metrics',
      'ServiceAccount/outrigger-cert-manager',
      'ValidatingAdmissionPolicy/outrigger-cert-manager-confinement',
      'ValidatingAdmissionPolicyBinding/outrigger-cert-manager-confinement',
    ]);
    expect(jetstack.map(key).filter((k) => /cert-manager/.test(k))).toEqual([]);
    expect(JSON.stringify(jetstack)).not.toMatch(/outrigger-cert-manager|outrigger\.dev\/inject-ca-from/);
    const added = jetstack.filter((o) => !prod.has(key(o)));
    expect(added.map((o) => `${o.apiVersion} ${key(o)}`).sort()).toEqual([
      'cert-manager.io/v1 Certificate/outrigger-injector',
      'cert-manager.io/v1 Certificate/outrigger-injector-ca',
      'cert-manager.io/v1 Issuer/outrigger-injector-ca',
      'cert-manager.io/v1 Issuer/outrigger-selfsigned',
    ]);
    // Unchanged but for the webhook's annotation and the metrics policy's pod list.
    const changed = jetstack.filter((o) => prod.has(key(o)) && JSON.stringify(prod.get(key(o))) !== JSON.stringify(o)).map(key);
    expect(changed.sort()).toEqual(['MutatingWebhookConfiguration/outrigger-injector', 'NetworkPolicy/outrigger-controllers-metrics']);
    const webhook = find('overlays/prod-jetstack', 'MutatingWebhookConfiguration', 'outrigger-injector') as any;
    expect(webhook.metadata.annotations).toEqual({ 'cert-manager.io/inject-ca-from': `${INSTALL_NAMESPACE}/outrigger-injector` });
    expect({ ...webhook, metadata: {} }).toEqual({ ...(prod.get('MutatingWebhookConfiguration/outrigger-injector') as any), metadata: {} });
    const metrics = find('overlays/prod-jetstack', 'NetworkPolicy', 'outrigger-controllers-metrics') as any;
    expect(metrics.spec.podSelector.matchExpressions[0].values).toEqual(['outrigger-rbac-syncer']);
  });

  it('prod-jetstack: the serving Certificate is issued by the CA Issuer into the Secret the injector mounts and watches, for the names the API server dials', () => {
    const path = 'overlays/prod-jetstack';
    const serving = find(path, 'Certificate', 'outrigger-injector') as any;
    const caIssuer = find(path, 'Issuer', serving.spec.issuerRef.name) as any;
    const ca = objects(path).find((o: any) => o.kind === 'Certificate' && o.spec.secretName === caIssuer.spec.ca.secretName) as any;
    expect(ca.spec.isCA).toBe(true);
    expect(find(path, 'Issuer', ca.spec.issuerRef.name)).toMatchObject({ spec: { selfSigned: {} } });
    for (const cert of [serving, ca]) expect(cert.spec.issuerRef).toMatchObject({ group: 'cert-manager.io', kind: 'Issuer' });
    expect(serving.spec.isCA).toBeUndefined();
    // The webhook's annotation names this Certificate: cainjector copies ca.crt of its Secret.
    const webhook = find(path, 'MutatingWebhookConfiguration', 'outrigger-injector') as any;
    expect(webhook.metadata.annotations['cert-manager.io/inject-ca-from']).toBe(`${serving.metadata.namespace}/${serving.metadata.name}`);
    const injector = find(path, 'Deployment', 'outrigger-injector') as any;
    const env = Object.fromEntries(injector.spec.template.spec.containers[0].env.map((e: any) => [e.name, e.value]));
    expect(env.TLS_SECRET).toBe(serving.spec.secretName);
    expect(injector.spec.template.spec.volumes).toContainEqual({ name: 'tls', secret: { secretName: serving.spec.secretName, optional: false } });
    const service = webhook.webhooks[0].clientConfig.service;
    const svc = `${service.name}.${service.namespace}.svc`;
    expect(serving.spec.dnsNames).toEqual([service.name, `${service.name}.${service.namespace}`, svc, `${svc}.cluster.local`]);
    expect(serving.spec.commonName).toBe(svc);
    expect(serving.spec.usages).toContain('server auth');
  });

  it('local: the reference profile differs from the shipped one only in the agent image built here, and the native one only where it must', () => {
    const parsed = objects('overlays/local').filter((o) => o.kind === 'AgentProfile').map((o) => parseAgentProfile(o));
    const [reference, native, ...rest] = parsed.map((p) => (p.ok ? p.value : p.error));
    expect(rest).toEqual([]);
    const shipped = referenceProfile();
    const LOCAL_AGENT = 'localhost/outrigger/xxl-agent:local';
    expect(reference).toEqual({ ...shipped, container: { ...shipped.container, image: LOCAL_AGENT } });
    // Its own data volume: two profiles that bring the same volume name cannot share a pod.
    const data = { name: 'xxl-agent-native-data', emptyDir: {} };
    expect(native).toEqual({
      ...(reference as typeof shipped),
      name: 'xxl-job-native',
      annotationPrefix: 'xxl-agent-native/',
      nativeSidecar: true,
      container: { ...shipped.container, image: LOCAL_AGENT, name: 'xxl-agent-native', volumeMounts: [{ name: data.name, mountPath: '/var/lib/xxl-agent' }] },
      volumes: [data],
      rbac: { ...shipped.rbac, clusterRole: 'xxl-agent-native-exec', binding: { kind: 'ClusterRoleBinding', name: 'xxl-agent-native-exec' } },
    });
    const syncerRole = find('overlays/local', 'ClusterRole', 'outrigger-rbac-syncer') as any;
    const named = syncerRole.rules.filter((r: any) => r.resourceNames && r.apiGroups.includes('rbac.authorization.k8s.io')).map((r: any) => r.resourceNames);
    expect(named).toEqual([['xxl-agent-exec', 'xxl-agent-native-exec']]);
  });

  it('local: the production shape with the images built here', () => {
    const images = deployments('overlays/local').map((d) => d.spec.template.spec.containers[0].image).sort();
    expect(images).toEqual(['localhost/outrigger/cert-manager:local', 'localhost/outrigger/injector:local', 'localhost/outrigger/rbac-syncer:local']);
    for (const d of deployments('overlays/local')) expect(d.spec.replicas).toBe(2);
    expect(find('overlays/local', 'MutatingWebhookConfiguration', 'outrigger-injector')).toMatchObject({ webhooks: [{ failurePolicy: 'Fail' }] });
    expect(objects('overlays/local').filter((o) => o.kind === 'NetworkPolicy')).toHaveLength(3);
  });

  it.each(['base/injector', 'base/rbac-syncer', 'base/cert-manager'])('%s ships a ServiceAccount, a Deployment and a PodDisruptionBudget', (path) => {
    const kinds = new Set(objects(path).map((o) => o.kind));
    for (const kind of ['ServiceAccount', 'Deployment', 'PodDisruptionBudget', 'Service']) expect(kinds, `${path} ${kind}`).toContain(kind);
  });
});

function expectedWebhookOptions() {
  return {
    name: 'outrigger-injector',
    installNamespace: INSTALL_NAMESPACE,
    client: { mode: 'service', name: 'outrigger-injector' },
    injectCaFrom: `${INSTALL_NAMESPACE}/outrigger-injector-tls`,
  } as const;
}
