/**
 * The names deploy/base gives Outrigger's objects, defined once: the services' defaults, `outrigger
 * check` and `uninstall`, the tools and the tests use these, and deploy/tests holds deploy/ to them.
 * No imports: the cert-manager and the injector read it through `@outrigger/install/names` alone.
 */
export const INSTALL_NAMES = {
  /** The install namespace. */
  namespace: 'outrigger-system',
  /** The injector's Deployment, ServiceAccount, Role and Service. */
  injector: 'outrigger-injector',
  /** The rbac-syncer's Deployment, ServiceAccount, ClusterRole, Lease and field manager. */
  rbacSyncer: 'outrigger-rbac-syncer',
  /** The cert-manager's Deployment, ServiceAccount, Roles, Lease and field manager. */
  certManager: 'outrigger-cert-manager',
  /** The MutatingWebhookConfiguration. */
  webhook: 'outrigger-injector',
  /** The Secret holding the webhook's CA. */
  caSecret: 'outrigger-webhook-ca',
  /** The injector's serving Secret. */
  servingSecret: 'outrigger-injector-tls',
  /** The exec guard's ValidatingAdmissionPolicy and its binding. */
  execGuard: 'outrigger-agent-exec-guard',
  /** The ValidatingAdmissionPolicy (and binding) refusing agent-named containers in pods that do not opt in. */
  forgedAgentPolicy: 'outrigger-forged-agent',
  /** The ValidatingAdmissionPolicy (and binding) warning of annotations under a profile's prefix without its opt-in. */
  optInMissingPolicy: 'outrigger-opt-in-missing',
  /** The ValidatingAdmissionPolicy (and binding) warning of an opt-in added to a pod after its creation. */
  optInAfterCreationPolicy: 'outrigger-opt-in-after-creation',
  /** The Helm chart's pre-delete hook: its Job, ServiceAccount, Role, ClusterRole and bindings. */
  uninstallHook: 'outrigger-uninstall',
  /** The Helm chart's test (`helm test`): its Pod running `outrigger check`, ServiceAccount, Role, ClusterRole and bindings. */
  checkHook: 'outrigger-check',
} as const;

/** The service a Deployment runs, by its `app.kubernetes.io/component` label (deploy/base/<component>). */
export type ServiceComponent = 'injector' | 'rbac-syncer' | 'cert-manager';

/** Each service's Deployment, ServiceAccount and (for the two that lead) Lease. */
export const SERVICE_NAMES: Readonly<Record<ServiceComponent, string>> = {
  injector: INSTALL_NAMES.injector,
  'rbac-syncer': INSTALL_NAMES.rbacSyncer,
  'cert-manager': INSTALL_NAMES.certManager,
};

/**
 * The annotation by which a leading service stamps its Lease with `<identity> <version>`: `outrigger
 * check` believes the version only while the identity is the Lease's holder, since a leader of an
 * earlier version, taking over after a crash, keeps annotations it does not know.
 */
export const LEASE_HOLDER_VERSION_ANNOTATION = 'outrigger.dev/holder-version';

export function holderVersionAnnotations(identity: string, version: string): Record<string, string> {
  return { [LEASE_HOLDER_VERSION_ANNOTATION]: `${identity} ${version}` };
}

/** The version the Lease's current holder stamped; undefined when none did (an earlier version, another writer). */
export function holderVersionFrom(annotations: Readonly<Record<string, unknown>> | undefined, holder: string | undefined): string | undefined {
  const stamp = annotations?.[LEASE_HOLDER_VERSION_ANNOTATION];
  if (typeof stamp !== 'string' || holder === undefined) return undefined;
  const [identity, version, ...rest] = stamp.split(' ');
  return identity === holder && version && rest.length === 0 ? version : undefined;
}
