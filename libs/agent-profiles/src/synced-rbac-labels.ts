/** How the rbac-syncer labels the ClusterRoles and bindings it writes: its watches and `outrigger uninstall` find them by these. */
export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';
export const MANAGED_BY_VALUE = 'outrigger-rbac-syncer';
/** Which profile an object belongs to. */
export const PROFILE_LABEL = 'outrigger.dev/profile';
/** Which namespace's ServiceAccounts a ClusterRoleBinding holds: one binding per namespace and profile. */
export const NAMESPACE_LABEL = 'outrigger.dev/namespace';
/**
 * On the syncer's bindings: the ServiceAccounts it removed from the binding a moment ago, as
 * space-separated `<namespace>/<name>`. The API server authorizes a request before admission sees
 * it, so an exec authorized just before a removal meets the exec guard after it: the guard judges
 * these as it judges the subjects. `REVOKED_UNTIL_ANNOTATION` dates each (epoch ms, space-separated,
 * in the same order; the guard never reads it): the syncer drops an entry past its date when it
 * writes the binding, and writes it only to drop the last.
 */
export const REVOKED_ANNOTATION = 'outrigger.dev/revoked';
export const REVOKED_UNTIL_ANNOTATION = 'outrigger.dev/revoked-until';
