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
  /** The Helm chart's pre-delete hook: its Job, ServiceAccount, Role, ClusterRole and bindings. */
  uninstallHook: 'outrigger-uninstall',
} as const;

/** The service a Deployment runs, by its `app.kubernetes.io/component` label (deploy/base/<component>). */
export type ServiceComponent = 'injector' | 'rbac-syncer' | 'cert-manager';

/** Each service's Deployment, ServiceAccount and (for the two that lead) Lease. */
export const SERVICE_NAMES: Readonly<Record<ServiceComponent, string>> = {
  injector: INSTALL_NAMES.injector,
  'rbac-syncer': INSTALL_NAMES.rbacSyncer,
  'cert-manager': INSTALL_NAMES.certManager,
};
