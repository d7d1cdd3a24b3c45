import { SYSTEM_NAMESPACES } from '@outrigger/admission';
import { FORBIDDEN_VERBS, MANAGED_BY_LABEL, MANAGED_BY_VALUE, NAMESPACE_LABEL } from '@outrigger/agent-profiles';
import { denyBinding } from './deny-binding.js';
import { generatedYaml } from './exec-guard.js';
import { baseLabels } from './install-files.js';
import { INSTALL_NAMES } from './install-names.js';

export const SYNCER_CONFINEMENT_NAME = 'outrigger-rbac-syncer-confinement';
/** Generated from this module by `npm run generate:exec-guard`; a unit test fails until it is. */
export const SYNCER_CONFINEMENT_FILE = 'deploy/base/rbac-syncer/syncer-confinement.yaml';

/** The ServiceAccounts confined: the syncer's and the pre-delete hook's. */
const CONFINED = [INSTALL_NAMES.rbacSyncer, INSTALL_NAMES.uninstallHook];
const LABEL = `'${MANAGED_BY_LABEL}'`;
const OURS = (object: string) => `has(${object}.metadata.labels) && ${LABEL} in ${object}.metadata.labels && ${object}.metadata.labels[${LABEL}] == '${MANAGED_BY_VALUE}'`;
const list = (values: readonly string[]) => `[${values.map((v) => `'${v}'`).join(', ')}]`;
/** Roles no binding of the syncer's may name: the cluster's own, and its own and the hook's (it holds their rights, so RBAC would let it hand them on). */
const RESERVED_ROLES = ['cluster-admin', 'admin', 'edit', 'view', INSTALL_NAMES.rbacSyncer, INSTALL_NAMES.uninstallHook];
const NS_LABEL = `'${NAMESPACE_LABEL}'`;
/** Subject `s` belongs where the binding is for: a RoleBinding's namespace, a ClusterRoleBinding's label, or (a binding of an earlier version, for several namespaces) it was there before. */
const FOR_ITS_NAMESPACE = `(request.resource.resource == 'rolebindings' ? s.namespace == object.metadata.namespace : has(object.metadata.labels) && ${NS_LABEL} in object.metadata.labels ? s.namespace == object.metadata.labels[${NS_LABEL}] : request.operation == 'UPDATE' && has(oldObject.subjects) && oldObject.subjects.exists(o, o.kind == s.kind && o.namespace == s.namespace && o.name == s.name))`;
const noWildcard = (field: string) => `(!has(r.${field}) || r.${field}.all(x, !x.contains('*')))`;

/**
 * What the syncer writes, not only where: a profile's ClusterRole holds no wildcard, escalation
 * verb, non-resource URL or aggregation (as a profile's rules never do), and a binding names no
 * reserved role and binds only ServiceAccounts of the namespace it is for, never the syncer's own
 * namespace or a system one. RBAC lets the syncer escalate its profiles' roles and bind what it
 * holds: without these, its token would be a way to any right.
 */
const WRITES = [
  {
    expression: `request.operation == 'DELETE' || request.resource.resource != 'clusterroles' || (!has(object.aggregationRule) && (!has(object.rules) || object.rules.all(r, !has(r.nonResourceURLs) && ${noWildcard('apiGroups')} && ${noWildcard('resources')} && r.verbs.all(x, !x.contains('*') && !(x in ${list(FORBIDDEN_VERBS)})))))`,
    message: 'a profile role holds no wildcard, escalate, bind or impersonate verb, non-resource URL or aggregation rule',
  },
  {
    expression: `request.operation == 'DELETE' || request.resource.resource == 'clusterroles' || (object.roleRef.kind == 'ClusterRole' && !object.roleRef.name.startsWith('system:') && !(object.roleRef.name in ${list(RESERVED_ROLES)}))`,
    message: `a binding names a profile's ClusterRole, never one of ${RESERVED_ROLES.join(', ')} or system:*`,
  },
  {
    expression: `request.operation == 'DELETE' || request.resource.resource == 'clusterroles' || !has(object.subjects) || object.subjects.all(s, s.kind == 'ServiceAccount' && s.namespace != variables.callerNamespace && !(s.namespace in ${list(SYSTEM_NAMESPACES)}) && ${FOR_ITS_NAMESPACE})`,
    message: `a binding holds only ServiceAccounts of the namespace it is for (a RoleBinding's, a ClusterRoleBinding's ${NAMESPACE_LABEL} label; a binding of an earlier version only loses subjects), never of the syncer's own namespace or a system one`,
  },
];

/**
 * The rbac-syncer writes bindings under open-ended names (one per namespace), which RBAC cannot
 * limit by label: this policy does. Requests of a ServiceAccount named like the syncer's or the
 * Helm chart's pre-delete hook's (which deletes what the syncer wrote), in any namespace so an
 * overlay's namespace changes nothing, may create, change or delete only RBAC objects labelled as
 * the syncer's own, before and after.
 */
export function syncerConfinementPolicy(name = SYNCER_CONFINEMENT_NAME) {
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicy',
    metadata: { name, labels: baseLabels('rbac-syncer') },
    spec: {
      failurePolicy: 'Fail',
      matchConstraints: {
        resourceRules: [
          { apiGroups: ['rbac.authorization.k8s.io'], apiVersions: ['*'], operations: ['CREATE', 'UPDATE', 'DELETE'], resources: ['clusterrolebindings', 'rolebindings', 'clusterroles'] },
        ],
      },
      matchConditions: [{ name: 'rbac-syncer-only', expression: `request.userInfo.username.startsWith('system:serviceaccount:') && (${CONFINED.map((sa) => `request.userInfo.username.endsWith(':${sa}')`).join(' || ')})` }],
      // The caller is system:serviceaccount:<namespace>:<name>.
      variables: [{ name: 'callerNamespace', expression: "request.userInfo.username.split(':')[2]" }],
      validations: [
        {
          expression: `(request.operation == 'CREATE' || (${OURS('oldObject')})) && (request.operation == 'DELETE' || (${OURS('object')}))`,
          reason: 'Forbidden',
          messageExpression: `'outrigger rbac-syncer confinement: ' + request.userInfo.username + ' may write only RBAC objects labelled ${MANAGED_BY_LABEL}=${MANAGED_BY_VALUE}; ' + request.operation + ' of ' + request.resource.resource + ' ' + request.name + ' is refused'`,
        },
        ...WRITES.map(({ expression, message }) => ({
          expression,
          reason: 'Forbidden',
          messageExpression: `"outrigger rbac-syncer confinement: ${message}; " + request.operation + ' of ' + request.resource.resource + ' ' + request.name + ' by ' + request.userInfo.username + ' is refused'`,
        })),
      ],
    },
  };
}

export function syncerConfinementBinding(name = SYNCER_CONFINEMENT_NAME) {
  return denyBinding(name, 'rbac-syncer');
}

/** deploy/base/rbac-syncer/syncer-confinement.yaml. */
export function syncerConfinementYaml(): string {
  return generatedYaml(
    'libs/install/src/syncer-confinement.ts',
    ['The rbac-syncer may create, change and delete only RBAC objects labelled as its own: its bindings', 'have open-ended names (one per namespace), which RBAC cannot limit by label.'],
    [syncerConfinementPolicy(), syncerConfinementBinding()],
  );
}
