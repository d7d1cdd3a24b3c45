import {
  INJECT_ANNOTATION,
  INJECT_CA_FROM_ANNOTATION,
  INJECTION_LABEL_KEY,
  INJECTION_LABEL_VALUE,
  MUTATE_PATH,
  SYSTEM_NAMESPACES,
} from './constants.js';
import { isDnsLabel, isDnsSubdomain } from './k8s-names.js';

/** Where kube-apiserver reaches the webhook. */
export type WebhookClientTarget =
  /** Local runs: the API server calls https://127.0.0.1:<port>/mutate. */
  | { readonly mode: 'url'; readonly port: number; readonly host?: string }
  /** In-cluster: a Service, defaulting to the install namespace and port 443. */
  | { readonly mode: 'service'; readonly name: string; readonly namespace?: string; readonly port?: number };

export interface MutatingWebhookConfigurationOptions {
  /** metadata.name of the configuration object. */
  readonly name: string;
  /** The namespace the injector runs in: never matched, so a restart cannot deadlock on it. */
  readonly installNamespace: string;
  readonly client: WebhookClientTarget;
  /** Fully qualified webhook name (at least three DNS segments). */
  readonly webhookName?: string;
  /** Base64 of the PEM CA bundle; leave out when the certificate manager fills it in. */
  readonly caBundle?: string;
  /** `<namespace>/<secret>` for the certificate manager, written as an annotation. */
  readonly injectCaFrom?: string;
  readonly failurePolicy?: 'Fail' | 'Ignore';
  readonly timeoutSeconds?: number;
  readonly labels?: Readonly<Record<string, string>>;
}

export const DEFAULT_WEBHOOK_NAME = 'inject.outrigger.dev';
export const DEFAULT_TIMEOUT_SECONDS = 5;
export const NAMESPACE_NAME_LABEL = 'kubernetes.io/metadata.name';

/** A plain admissionregistration.k8s.io/v1 MutatingWebhookConfiguration (no client types). */
export interface MutatingWebhookConfiguration {
  readonly apiVersion: 'admissionregistration.k8s.io/v1';
  readonly kind: 'MutatingWebhookConfiguration';
  readonly metadata: {
    readonly name: string;
    readonly labels?: Readonly<Record<string, string>>;
    readonly annotations?: Readonly<Record<string, string>>;
  };
  readonly webhooks: readonly MutatingWebhook[];
}

export interface MutatingWebhook {
  readonly name: string;
  readonly admissionReviewVersions: readonly string[];
  readonly clientConfig: {
    readonly url?: string;
    readonly service?: { readonly namespace: string; readonly name: string; readonly path: string; readonly port: number };
    readonly caBundle?: string;
  };
  readonly rules: readonly {
    readonly operations: readonly string[];
    readonly apiGroups: readonly string[];
    readonly apiVersions: readonly string[];
    readonly resources: readonly string[];
    readonly scope: string;
  }[];
  readonly failurePolicy: 'Fail' | 'Ignore';
  readonly matchPolicy: 'Equivalent';
  readonly sideEffects: 'None';
  readonly timeoutSeconds: number;
  readonly reinvocationPolicy: 'IfNeeded';
  readonly namespaceSelector: {
    readonly matchLabels: Readonly<Record<string, string>>;
    readonly matchExpressions: readonly { readonly key: string; readonly operator: 'NotIn'; readonly values: readonly string[] }[];
  };
  readonly matchConditions: readonly { readonly name: string; readonly expression: string }[];
}

/**
 * The webhook registration: CREATE of core/v1 pods only, in namespaces labelled for injection,
 * never in the system namespaces or the injector's own (by label selector and again by CEL, so a
 * relabelled namespace cannot lock the injector out of restarting). Throws on invalid options:
 * they come from configuration and must fail at startup, not in the cluster.
 */
export function buildMutatingWebhookConfiguration(options: MutatingWebhookConfigurationOptions): MutatingWebhookConfiguration {
  const installNamespace = options.installNamespace;
  if (!isDnsLabel(installNamespace)) throw new RangeError(`installNamespace ${JSON.stringify(installNamespace)} is not a namespace name`);
  if (!isDnsSubdomain(options.name)) throw new RangeError(`name ${JSON.stringify(options.name)} is not a DNS subdomain`);
  const webhookName = options.webhookName ?? DEFAULT_WEBHOOK_NAME;
  if (!isDnsSubdomain(webhookName) || webhookName.split('.').length < 3) {
    throw new RangeError(`webhookName ${JSON.stringify(webhookName)} must be a DNS name with at least three segments`);
  }
  const timeoutSeconds = options.timeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS;
  if (!Number.isInteger(timeoutSeconds) || timeoutSeconds < 1 || timeoutSeconds > 30) {
    throw new RangeError(`timeoutSeconds must be an integer from 1 to 30 (got ${timeoutSeconds})`);
  }
  if (options.caBundle !== undefined && !/^[A-Za-z0-9+/]+={0,2}$/.test(options.caBundle)) {
    throw new RangeError('caBundle must be base64 (of the PEM bundle)');
  }
  if (options.injectCaFrom !== undefined) assertSecretReference(options.injectCaFrom);

  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'MutatingWebhookConfiguration',
    metadata: {
      name: options.name,
      ...(options.labels ? { labels: { ...options.labels } } : {}),
      ...(options.injectCaFrom ? { annotations: { [INJECT_CA_FROM_ANNOTATION]: options.injectCaFrom } } : {}),
    },
    webhooks: [
      {
        name: webhookName,
        admissionReviewVersions: ['v1', 'v1beta1'],
        clientConfig: Object.assign(clientTarget(options.client, installNamespace), options.caBundle ? { caBundle: options.caBundle } : {}),
        rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'], scope: 'Namespaced' }],
        failurePolicy: options.failurePolicy ?? 'Fail',
        matchPolicy: 'Equivalent',
        sideEffects: 'None',
        timeoutSeconds,
        reinvocationPolicy: 'IfNeeded',
        namespaceSelector: injectionNamespaceSelector(installNamespace),
        matchConditions: [
          { name: 'exclude-injector-namespace', expression: excludeNamespaceExpression(installNamespace) },
          { name: 'marked-pods', expression: markedPodExpression() },
        ],
      },
    ],
  };
}

/** CEL for matchConditions; the namespace is a DNS label, so it needs no escaping. */
export function excludeNamespaceExpression(namespace: string): string {
  if (!isDnsLabel(namespace)) throw new RangeError(`${JSON.stringify(namespace)} is not a namespace name`);
  return `request.namespace != '${namespace}'`;
}

/**
 * CEL: a pod the injector must see, for any profile, known or added later: one that opts in
 * (`outrigger.dev/inject`, any `<prefix>enable`) or carries a status annotation (`<prefix>status`:
 * a forgery to refuse). Every other pod in a labelled namespace costs no webhook call; the one
 * forgery it could carry, an agent-named container, is refused by the forged-agent policy
 * (libs/install), whose condition is this expression's negation.
 */
export function markedPodExpression(): string {
  // The profiles' ENABLE_SUFFIX and STATUS_SUFFIX (libs/agent-profiles, which depends on this library).
  return `has(object.metadata.annotations) && object.metadata.annotations.exists(k, k == '${INJECT_ANNOTATION}' || k.endsWith('/enable') || k.endsWith('/status'))`;
}

/**
 * The namespaces the webhook (and every admission policy that complements it) applies to: labelled
 * for injection, never a system namespace or the install namespace.
 */
export function injectionNamespaceSelector(installNamespace: string): MutatingWebhook['namespaceSelector'] {
  return {
    matchLabels: { [INJECTION_LABEL_KEY]: INJECTION_LABEL_VALUE },
    matchExpressions: [{ key: NAMESPACE_NAME_LABEL, operator: 'NotIn', values: [...new Set<string>([...SYSTEM_NAMESPACES, installNamespace])] }],
  };
}

/** caBundle is base64 of the PEM text, not the PEM itself. */
export function encodeCaBundle(pem: string): string {
  return Buffer.from(pem, 'utf8').toString('base64');
}

function clientTarget(target: WebhookClientTarget, installNamespace: string): MutatingWebhook['clientConfig'] {
  if (target.mode === 'url') {
    assertPort(target.port);
    return { url: `https://${target.host ?? '127.0.0.1'}:${target.port}${MUTATE_PATH}` };
  }
  const port = target.port ?? 443;
  assertPort(port);
  const namespace = target.namespace ?? installNamespace;
  if (!isDnsLabel(target.name) || !isDnsLabel(namespace)) throw new RangeError('service name and namespace must be DNS labels');
  return { service: { namespace, name: target.name, path: MUTATE_PATH, port } };
}

function assertPort(port: number): void {
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new RangeError(`port must be 1-65535 (got ${port})`);
}

function assertSecretReference(reference: string): void {
  const [namespace, secret, ...rest] = reference.split('/');
  if (rest.length > 0 || !namespace || !secret || !isDnsLabel(namespace) || !isDnsSubdomain(secret)) {
    throw new RangeError(`injectCaFrom must be <namespace>/<secret> (got ${JSON.stringify(reference)})`);
  }
}
