import { INJECT_ANNOTATION, INJECTION_LABEL_KEY, INJECTION_LABEL_VALUE } from '@outrigger/admission';
import { ENABLE_SUFFIX } from '@outrigger/agent-profiles';
import { generatedYaml } from './exec-guard.js';
import { baseLabels } from './install-files.js';
import { INSTALL_NAMES } from './install-names.js';

export const OPT_IN_AFTER_CREATION_POLICY_NAME = INSTALL_NAMES.optInAfterCreationPolicy;
/** Generated from this module by `npm run generate:exec-guard`; a unit test fails until it is. */
export const OPT_IN_AFTER_CREATION_POLICY_FILE = 'deploy/base/webhook/opt-in-after-creation.yaml';

/**
 * Agents are injected at pod creation only (the pod spec is immutable after it), so an UPDATE that
 * adds an opt-in annotation adds no agent, and the rbac-syncer binds nothing for it: this policy
 * says so to whoever made the change, a warning and never a denial.
 */
export function optInAfterCreationPolicy(name: string = OPT_IN_AFTER_CREATION_POLICY_NAME) {
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicy',
    metadata: { name, labels: baseLabels('webhook') },
    spec: {
      // A warning must never keep a pod from being changed.
      failurePolicy: 'Ignore',
      matchConstraints: { resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['UPDATE'], resources: ['pods'] }] },
      variables: [
        {
          name: 'added',
          expression: `(has(object.metadata.annotations) ? object.metadata.annotations : {}).filter(k, (k == '${INJECT_ANNOTATION}' || k.endsWith('/${ENABLE_SUFFIX}')) && !(has(oldObject.metadata.annotations) && k in oldObject.metadata.annotations))`,
        },
      ],
      validations: [
        {
          expression: 'size(variables.added) == 0',
          messageExpression:
            "'outrigger: ' + variables.added.join(', ') + ' added after the pod was created: agents are injected only at creation, so this change adds no agent, and the rbac-syncer binds nothing for a pod whose agent was not injected at creation; recreate the pod (e.g. through the pod template of its controller)'",
        },
      ],
    },
  };
}

/** Warns only, in the namespaces labelled for injection. */
export function optInAfterCreationBinding(name: string = OPT_IN_AFTER_CREATION_POLICY_NAME) {
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicyBinding',
    metadata: { name, labels: baseLabels('webhook') },
    spec: { policyName: name, validationActions: ['Warn'], matchResources: { namespaceSelector: { matchLabels: { [INJECTION_LABEL_KEY]: INJECTION_LABEL_VALUE } } } },
  };
}

/** deploy/base/webhook/opt-in-after-creation.yaml. */
export function optInAfterCreationPolicyYaml(): string {
  return generatedYaml(
    'libs/install/src/opt-in-after-creation-policy.ts',
    [
      'Agents are injected at pod creation only: an UPDATE that adds an opt-in annotation adds no agent',
      'and no RBAC; this policy says so to whoever made the change (a warning, never a denial).',
    ],
    [optInAfterCreationPolicy(), optInAfterCreationBinding()],
  );
}
