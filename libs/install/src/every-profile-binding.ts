import { injectionNamespaceSelector } from '@outrigger/admission';
import { baseLabels } from './install-files.js';
import { INSTALL_NAMES } from './install-names.js';

/**
 * Binds a per-profile admission policy to every AgentProfile as its parameters, in the namespaces
 * the webhook serves. AgentProfiles are cluster-scoped (no namespace); without any profile there is
 * nothing to judge, so the policy allows.
 */
export function everyProfileBinding(name: string, validationAction: 'Deny' | 'Warn') {
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicyBinding',
    metadata: { name, labels: baseLabels('webhook') },
    spec: {
      policyName: name,
      validationActions: [validationAction],
      paramRef: { selector: {}, parameterNotFoundAction: 'Allow' },
      matchResources: { namespaceSelector: injectionNamespaceSelector(INSTALL_NAMES.namespace) },
    },
  };
}
