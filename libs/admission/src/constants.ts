/** Namespaces label this to have their pods considered for injection at all. */
export const INJECTION_LABEL_KEY = 'outrigger.dev/injection';
export const INJECTION_LABEL_VALUE = 'enabled';

/** Pods may name the profiles they want here: `"<profile>[,<profile>]"`. */
export const INJECT_ANNOTATION = 'outrigger.dev/inject';

/** Tells the certificate manager which Secret's CA to write into the webhook's caBundle. */
export const INJECT_CA_FROM_ANNOTATION = 'outrigger.dev/inject-ca-from';

/** Where the API server's ServiceAccount admission plugin mounts the API token in each container. */
export const SERVICE_ACCOUNT_TOKEN_PATH = '/var/run/secrets/kubernetes.io/serviceaccount';

/** Where the webhook serves AdmissionReviews. */
export const MUTATE_PATH = '/mutate';

/**
 * Never mutated, whatever they ask: a webhook that matches these can deadlock a cluster restart.
 * The injector's own namespace joins them at run time (see protectedNamespacesFor).
 */
export const SYSTEM_NAMESPACES = ['kube-system', 'kube-public', 'kube-node-lease'] as const;

/** The system namespaces plus the one the injector runs in. */
export function protectedNamespacesFor(installNamespace: string): readonly string[] {
  return [...new Set<string>([...SYSTEM_NAMESPACES, installNamespace])];
}
