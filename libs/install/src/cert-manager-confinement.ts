import { denyBinding } from './deny-binding.js';
import { generatedYaml } from './exec-guard.js';
import { baseLabels } from './install-files.js';
import { INSTALL_NAMES } from './install-names.js';

export const CERT_MANAGER_CONFINEMENT_NAME = 'outrigger-cert-manager-confinement';
/** Generated from this module by `npm run generate:exec-guard`; a unit test fails until it is. */
export const CERT_MANAGER_CONFINEMENT_FILE = 'deploy/base/cert-manager/cert-manager-confinement.yaml';

/** Every field of a MutatingWebhook but `clientConfig.caBundle`: what the cert-manager must leave as it is. */
const KEPT_FIELDS = ['rules', 'failurePolicy', 'matchPolicy', 'namespaceSelector', 'objectSelector', 'sideEffects', 'timeoutSeconds', 'admissionReviewVersions', 'reinvocationPolicy', 'matchConditions'];
const SAME_WEBHOOK = [
  'o.name == w.name',
  'w.clientConfig.?url == o.clientConfig.?url',
  'w.clientConfig.?service == o.clientConfig.?service',
  ...KEPT_FIELDS.map((field) => `w.?${field} == o.?${field}`),
].join(' && ');

/**
 * RBAC lets the cert-manager patch the webhook configuration, any field of it: this policy keeps
 * it to the caBundles, so its token cannot point the webhook elsewhere or widen it to more pods.
 * With REGISTER_WEBHOOK, the configuration it creates must call the install's own injector Service.
 */
export function certManagerConfinementPolicy(name = CERT_MANAGER_CONFINEMENT_NAME) {
  const who = `request.userInfo.username.startsWith('system:serviceaccount:') && request.userInfo.username.endsWith(':${INSTALL_NAMES.certManager}')`;
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicy',
    metadata: { name, labels: baseLabels('cert-manager') },
    spec: {
      failurePolicy: 'Fail',
      matchConstraints: {
        resourceRules: [{ apiGroups: ['admissionregistration.k8s.io'], apiVersions: ['*'], operations: ['CREATE', 'UPDATE'], resources: ['mutatingwebhookconfigurations'] }],
      },
      matchConditions: [{ name: 'cert-manager-only', expression: who }],
      // The caller is system:serviceaccount:<namespace>:<name>.
      variables: [{ name: 'callerNamespace', expression: "request.userInfo.username.split(':')[2]" }],
      validations: [
        {
          expression: `request.operation != 'UPDATE' || (object.metadata.?labels == oldObject.metadata.?labels && object.metadata.?annotations == oldObject.metadata.?annotations && size(object.?webhooks.orValue([])) == size(oldObject.?webhooks.orValue([])) && object.?webhooks.orValue([]).all(w, oldObject.?webhooks.orValue([]).exists(o, ${SAME_WEBHOOK})))`,
          reason: 'Forbidden',
          messageExpression: `'outrigger cert-manager confinement: ' + request.userInfo.username + ' may change only the caBundles of a webhook configuration; UPDATE of ' + request.name + ' is refused'`,
        },
        {
          expression: `request.operation != 'CREATE' || (object.metadata.name == '${INSTALL_NAMES.webhook}' && object.?webhooks.orValue([]).all(w, w.clientConfig.?service.?name.orValue('') == '${INSTALL_NAMES.injector}' && w.clientConfig.?service.?namespace.orValue('') == variables.callerNamespace))`,
          reason: 'Forbidden',
          messageExpression: `'outrigger cert-manager confinement: ' + request.userInfo.username + ' may create only webhook configuration ${INSTALL_NAMES.webhook}, calling Service ${INSTALL_NAMES.injector} of ' + variables.callerNamespace + '; CREATE of ' + request.name + ' is refused'`,
        },
      ],
    },
  };
}

export function certManagerConfinementBinding(name = CERT_MANAGER_CONFINEMENT_NAME) {
  return denyBinding(name, 'cert-manager');
}

/** deploy/base/cert-manager/cert-manager-confinement.yaml. */
export function certManagerConfinementYaml(): string {
  return generatedYaml(
    'libs/install/src/cert-manager-confinement.ts',
    ['The cert-manager may change only the caBundles of the webhook configuration: RBAC cannot limit', 'its patch to that field.'],
    [certManagerConfinementPolicy(), certManagerConfinementBinding()],
  );
}
