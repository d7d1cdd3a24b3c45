/** How the rbac-syncer labels the ClusterRoles and bindings it writes: its watches and `outrigger uninstall` find them by these. */
export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';
export const MANAGED_BY_VALUE = 'outrigger-rbac-syncer';
/** Which profile an object belongs to. */
export const PROFILE_LABEL = 'outrigger.dev/profile';
/** Which namespace's ServiceAccounts a ClusterRoleBinding holds: one binding per namespace and profile. */
export const NAMESPACE_LABEL = 'outrigger.dev/namespace';
