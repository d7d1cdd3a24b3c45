import { MANAGED_BY_LABEL, MANAGED_BY_VALUE } from '@outrigger/agent-profiles';
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
      validations: [
        {
          expression: `(request.operation == 'CREATE' || (${OURS('oldObject')})) && (request.operation == 'DELETE' || (${OURS('object')}))`,
          reason: 'Forbidden',
          messageExpression: `'outrigger rbac-syncer confinement: ' + request.userInfo.username + ' may write only RBAC objects labelled ${MANAGED_BY_LABEL}=${MANAGED_BY_VALUE}; ' + request.operation + ' of ' + request.resource.resource + ' ' + request.name + ' is refused'`,
        },
      ],
    },
  };
}

export function syncerConfinementBinding(name = SYNCER_CONFINEMENT_NAME) {
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicyBinding',
    metadata: { name, labels: baseLabels('rbac-syncer') },
    spec: { policyName: name, validationActions: ['Deny'] },
  };
}

/** deploy/base/rbac-syncer/syncer-confinement.yaml. */
export function syncerConfinementYaml(): string {
  return generatedYaml(
    'libs/install/src/syncer-confinement.ts',
    ['The rbac-syncer may create, change and delete only RBAC objects labelled as its own: its bindings', 'have open-ended names (one per namespace), which RBAC cannot limit by label.'],
    [syncerConfinementPolicy(), syncerConfinementBinding()],
  );
}
