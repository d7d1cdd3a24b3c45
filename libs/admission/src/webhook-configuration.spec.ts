import { describe, expect, it } from 'vitest';
import { INJECTION_LABEL_KEY, INJECTION_LABEL_VALUE, protectedNamespacesFor, SYSTEM_NAMESPACES } from './constants.js';
import {
  buildMutatingWebhookConfiguration,
  encodeCaBundle,
  excludeNamespaceExpression,
  markedPodExpression,
  type MutatingWebhookConfigurationOptions,
} from './webhook-configuration.js';

const SERVICE: MutatingWebhookConfigurationOptions = {
  name: 'outrigger-injector',
  installNamespace: 'outrigger-system',
  client: { mode: 'service', name: 'outrigger-injector' },
};

function webhookOf(options: MutatingWebhookConfigurationOptions) {
  const webhook = buildMutatingWebhookConfiguration(options).webhooks[0];
  if (!webhook) throw new Error('no webhook');
  return webhook;
}

describe('buildMutatingWebhookConfiguration', () => {
  it('builds the in-cluster configuration with safe defaults', () => {
    expect(buildMutatingWebhookConfiguration(SERVICE)).toEqual({
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'MutatingWebhookConfiguration',
      metadata: { name: 'outrigger-injector' },
      webhooks: [
        {
          name: 'inject.outrigger.dev',
          admissionReviewVersions: ['v1', 'v1beta1'],
          clientConfig: { service: { namespace: 'outrigger-system', name: 'outrigger-injector', path: '/mutate', port: 443 } },
          rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'], scope: 'Namespaced' }],
          failurePolicy: 'Fail',
          matchPolicy: 'Equivalent',
          sideEffects: 'None',
          timeoutSeconds: 5,
          reinvocationPolicy: 'IfNeeded',
          namespaceSelector: {
            matchLabels: { 'outrigger.dev/injection': 'enabled' },
            matchExpressions: [
              {
                key: 'kubernetes.io/metadata.name',
                operator: 'NotIn',
                values: ['kube-system', 'kube-public', 'kube-node-lease', 'outrigger-system'],
              },
            ],
          },
          matchConditions: [
            { name: 'exclude-injector-namespace', expression: "request.namespace != 'outrigger-system'" },
            { name: 'marked-pods', expression: markedPodExpression() },
          ],
        },
      ],
    });
  });

  it('uses the exported label and the protected namespace list', () => {
    const webhook = webhookOf(SERVICE);
    expect(webhook.namespaceSelector.matchLabels).toEqual({ [INJECTION_LABEL_KEY]: INJECTION_LABEL_VALUE });
    expect(webhook.namespaceSelector.matchExpressions[0]?.values).toEqual(protectedNamespacesFor('outrigger-system'));
    expect(SYSTEM_NAMESPACES).toEqual(['kube-system', 'kube-public', 'kube-node-lease']);
  });

  it('does not list kube-system twice when the injector is installed there', () => {
    const webhook = webhookOf({ ...SERVICE, installNamespace: 'kube-system' });
    expect(webhook.namespaceSelector.matchExpressions[0]?.values).toEqual(['kube-system', 'kube-public', 'kube-node-lease']);
  });

  it('points at 127.0.0.1 in url mode for local runs', () => {
    expect(webhookOf({ ...SERVICE, client: { mode: 'url', port: 9443 } }).clientConfig).toEqual({ url: 'https://127.0.0.1:9443/mutate' });
  });

  it('takes an explicit service namespace and port', () => {
    const webhook = webhookOf({ ...SERVICE, client: { mode: 'service', name: 'injector', namespace: 'other', port: 8443 } });
    expect(webhook.clientConfig.service).toEqual({ namespace: 'other', name: 'injector', path: '/mutate', port: 8443 });
  });

  it('carries the CA bundle, the cert-manager annotation, labels and policy overrides', () => {
    const caBundle = encodeCaBundle('-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n');
    const configuration = buildMutatingWebhookConfiguration({
      ...SERVICE,
      caBundle,
      injectCaFrom: 'outrigger-system/outrigger-injector-tls',
      failurePolicy: 'Ignore',
      timeoutSeconds: 10,
      labels: { 'app.kubernetes.io/name': 'outrigger' },
    });
    expect(configuration.metadata).toEqual({
      name: 'outrigger-injector',
      labels: { 'app.kubernetes.io/name': 'outrigger' },
      annotations: { 'outrigger.dev/inject-ca-from': 'outrigger-system/outrigger-injector-tls' },
    });
    const webhook = configuration.webhooks[0];
    expect(webhook?.clientConfig.caBundle).toBe(caBundle);
    expect(Buffer.from(caBundle, 'base64').toString('utf8')).toContain('BEGIN CERTIFICATE');
    expect(webhook?.failurePolicy).toBe('Ignore');
    expect(webhook?.timeoutSeconds).toBe(10);
  });

  it.each<[string, Partial<MutatingWebhookConfigurationOptions>, RegExp]>([
    ['bad namespace', { installNamespace: 'Outrigger' }, /installNamespace/],
    ['bad name', { name: 'Bad_Name' }, /name/],
    ['two-segment webhook name', { webhookName: 'outrigger.dev' }, /three segments/],
    ['timeout too long', { timeoutSeconds: 31 }, /timeoutSeconds/],
    ['timeout zero', { timeoutSeconds: 0 }, /timeoutSeconds/],
    ['PEM instead of base64', { caBundle: '-----BEGIN CERTIFICATE-----' }, /base64/],
    ['bad CA reference', { injectCaFrom: 'just-a-secret' }, /<namespace>\/<secret>/],
    ['bad port', { client: { mode: 'url', port: 70000 } }, /port/],
    ['bad service name', { client: { mode: 'service', name: 'Injector' } }, /DNS labels/],
  ])('refuses %s', (_name, change, message) => {
    expect(() => buildMutatingWebhookConfiguration({ ...SERVICE, ...change })).toThrow(message);
  });
});

describe('CEL expressions', () => {
  it('excludes exactly the install namespace', () => {
    expect(excludeNamespaceExpression('outrigger-system')).toBe("request.namespace != 'outrigger-system'");
  });

  it('cannot be broken by quoting', () => {
    expect(() => excludeNamespaceExpression("x' || true || '")).toThrow(RangeError);
  });

  it("marks a pod by any profile's opt-in or status annotation, whatever the profiles in force", () => {
    expect(markedPodExpression()).toBe("has(object.metadata.annotations) && object.metadata.annotations.exists(k, k == 'outrigger.dev/inject' || k.endsWith('/enable') || k.endsWith('/status'))");
  });
});
