import { baseLabels } from './install-files.js';
import type { ServiceComponent } from './install-names.js';

/** A ValidatingAdmissionPolicyBinding of policy `name` (its own name too) that denies, for every request the policy matches. */
export function denyBinding(name: string, component: ServiceComponent) {
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicyBinding',
    metadata: { name, labels: baseLabels(component) },
    spec: { policyName: name, validationActions: ['Deny'] },
  };
}
