import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AdmissionregistrationV1Api, CoreV1Api, PatchStrategy, RbacAuthorizationV1Api, setHeaderOptions, type V1MutatingWebhookConfiguration } from '@kubernetes/client-node';
import { buildMutatingWebhookConfiguration } from '@outrigger/admission';
import { createTestNamespace, kubeConfigFrom, poll, repoRoot, writeTokenKubeconfig } from '@outrigger/control-plane';
import { CERT_MANAGER_CONFINEMENT_FILE, INSTALL_NAMES } from '@outrigger/install';
import { loadKubeClient } from '@outrigger/kube';
import { issueCertificate } from '@outrigger/pki';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { patchCaBundle, readWebhookConfiguration } from '../src/controller/secret-and-webhook-io.js';

// The shipped cert-manager confinement on a real kube-apiserver, tried with a token of a
// ServiceAccount named as the cert-manager's that RBAC lets patch and create any webhook
// configuration: the policy alone keeps it to the caBundles, and its own caBundle patch passes.
const cp = inject('controlPlane');
const admin = kubeConfigFrom(cp.kubeconfigPath);
const POLICY = join(repoRoot(), CERT_MANAGER_CONFINEMENT_FILE);
const dir = mkdtempSync(join(tmpdir(), 'cert-manager-confinement-'));
const suffix = randomBytes(3).toString('hex');
const configName = `outrigger-cm-confined-${suffix}`;
const roleName = `cm-confined-${suffix}`;
const kubectl = (args: string[]) => execFileSync(join(cp.binDir, 'kubectl'), ['--kubeconfig', cp.kubeconfigPath, ...args], { stdio: 'pipe', encoding: 'utf8' });
let ns: string;
let tokenConfig: string;
let asCertManager: AdmissionregistrationV1Api;

const refusal = (write: Promise<unknown>) => write.then(() => 'allowed', (error: unknown) => String((error as { body?: unknown }).body ?? error));
const jsonPatch = (body: object[], name = configName) => refusal(asCertManager.patchMutatingWebhookConfiguration({ name, dryRun: 'All', body }, setHeaderOptions('Content-Type', PatchStrategy.JsonPatch)));
// A failing-closed twin that selects no namespace (the suites beside this one create pods), to try making it fail open.
const closedName = `${configName}-closed`;

beforeAll(async () => {
  ns = await createTestNamespace(admin, 'cm-confined');
  await admin.makeApiClient(CoreV1Api).createNamespacedServiceAccount({ namespace: ns, body: { metadata: { name: INSTALL_NAMES.certManager } } });
  // Wider than deploy/base grants (any name, create): what RBAC cannot narrow, the policy must.
  const rbac = admin.makeApiClient(RbacAuthorizationV1Api);
  await rbac.createClusterRole({ body: { metadata: { name: roleName }, rules: [{ apiGroups: ['admissionregistration.k8s.io'], resources: ['mutatingwebhookconfigurations'], verbs: ['get', 'list', 'watch', 'patch', 'create'] }] } });
  await rbac.createClusterRoleBinding({ body: { metadata: { name: roleName }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: roleName }, subjects: [{ kind: 'ServiceAccount', name: INSTALL_NAMES.certManager, namespace: ns }] } });
  tokenConfig = await writeTokenKubeconfig(admin, join(dir, 'kubeconfig'), ns, INSTALL_NAMES.certManager);
  asCertManager = kubeConfigFrom(tokenConfig).makeApiClient(AdmissionregistrationV1Api);
  const webhook = buildMutatingWebhookConfiguration({ name: configName, installNamespace: ns, client: { mode: 'service', name: INSTALL_NAMES.injector }, failurePolicy: 'Ignore' });
  await admin.makeApiClient(AdmissionregistrationV1Api).createMutatingWebhookConfiguration({ body: structuredClone(webhook) as V1MutatingWebhookConfiguration });
  const closed = buildMutatingWebhookConfiguration({ name: closedName, installNamespace: ns, client: { mode: 'service', name: INSTALL_NAMES.injector }, failurePolicy: 'Fail' });
  const selectingNothing = { ...closed, webhooks: closed.webhooks.map((w) => ({ ...w, namespaceSelector: { matchLabels: { [`cm-confined-${suffix}`]: 'never' } } })) };
  await admin.makeApiClient(AdmissionregistrationV1Api).createMutatingWebhookConfiguration({ body: structuredClone(selectingNothing) as V1MutatingWebhookConfiguration });
  kubectl(['apply', '-f', POLICY]);
  // The API server loads a new policy asynchronously.
  await poll('the confinement to refuse a changed failurePolicy', async () => ((await jsonPatch([{ op: 'replace', path: '/webhooks/0/failurePolicy', value: 'Fail' }])) === 'allowed' ? undefined : true));
});

afterAll(async () => {
  kubectl(['delete', '--ignore-not-found', '-f', POLICY]);
  kubectl(['delete', '--ignore-not-found', 'mutatingwebhookconfiguration', configName, closedName]);
  kubectl(['delete', '--ignore-not-found', 'clusterrolebinding,clusterrole', roleName]);
});

describe('the cert-manager confinement on a real kube-apiserver', () => {
  it('lets the cert-manager set a caBundle as it does (its own guarded JSON patch)', async () => {
    const ca = issueCertificate({ commonName: 'confined-ca', usage: 'ca', lifetimeMs: 86_400_000 });
    const kc = loadKubeClient(tokenConfig);
    const configuration = await readWebhookConfiguration(kc, configName);
    if (!configuration) throw new Error(`webhook configuration ${configName} is gone`);
    const result = await patchCaBundle(kc, configuration, configuration.webhooks?.[0]?.name ?? '', ca.cert);
    expect(result.applied).toBe(true);
    const stored = await admin.makeApiClient(AdmissionregistrationV1Api).readMutatingWebhookConfiguration({ name: configName });
    expect(Buffer.from(stored.webhooks?.[0]?.clientConfig.caBundle ?? '', 'base64').toString('utf8')).toBe(ca.cert);
  });

  it('refuses every other change: where the webhook calls, which pods it sees, how it fails, its labels', async () => {
    const refused = 'outrigger cert-manager confinement: system:serviceaccount:';
    for (const patch of [
      [{ op: 'remove', path: '/webhooks/0/clientConfig/service' }, { op: 'add', path: '/webhooks/0/clientConfig/url', value: 'https://attacker.example/mutate' }],
      [{ op: 'replace', path: '/webhooks/0/clientConfig/service/name', value: 'elsewhere' }],
      [{ op: 'replace', path: '/webhooks/0/namespaceSelector', value: {} }],
      [{ op: 'remove', path: '/webhooks/0/matchConditions' }],
      [{ op: 'replace', path: '/webhooks/0/rules/0/resources', value: ['*'] }],
      [{ op: 'replace', path: '/webhooks/0/failurePolicy', value: 'Fail' }],
      [{ op: 'replace', path: '/webhooks/0/timeoutSeconds', value: 30 }],
      [{ op: 'add', path: '/metadata/labels', value: { claimed: 'true' } }],
    ]) {
      expect(await jsonPatch(patch), JSON.stringify(patch)).toContain(refused);
    }
    // Fail open: a webhook that fails closed may not be made to ignore its failures, nor to skip every pod.
    for (const patch of [[{ op: 'replace', path: '/webhooks/0/failurePolicy', value: 'Ignore' }], [{ op: 'replace', path: '/webhooks/0/matchConditions', value: [{ name: 'never', expression: 'false' }] }]]) {
      expect(await jsonPatch(patch, closedName), JSON.stringify(patch)).toContain(refused);
    }
  });

  it('creates only the install\'s own webhook configuration, calling its own injector Service', async () => {
    const create = (name: string, namespace: string, service: string) =>
      refusal(asCertManager.createMutatingWebhookConfiguration({ dryRun: 'All', body: structuredClone(buildMutatingWebhookConfiguration({ name, installNamespace: namespace, client: { mode: 'service', name: service } })) as V1MutatingWebhookConfiguration }));
    expect(await create(INSTALL_NAMES.webhook, ns, INSTALL_NAMES.injector)).toBe('allowed');
    expect(await create(`other-${suffix}`, ns, INSTALL_NAMES.injector)).toContain('may create only webhook configuration outrigger-injector');
    expect(await create(INSTALL_NAMES.webhook, ns, 'elsewhere')).toContain('may create only webhook configuration outrigger-injector');
    expect(await create(INSTALL_NAMES.webhook, 'kube-system', INSTALL_NAMES.injector)).toContain('may create only webhook configuration outrigger-injector');
  });
});
