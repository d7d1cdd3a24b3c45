import { injectionNamespaceSelector, markedPodExpression } from '@outrigger/admission';
import { AGENT_PROFILE_API_VERSION, AGENT_PROFILE_KIND } from '@outrigger/agent-profiles';
import { everyProfileBinding } from './every-profile-binding.js';
import { generatedYaml } from './exec-guard.js';
import { baseLabels } from './install-files.js';
import { INSTALL_NAMES } from './install-names.js';

export const FORGED_AGENT_POLICY_NAME = INSTALL_NAMES.forgedAgentPolicy;
/** Generated from this module by `npm run generate:exec-guard`; a unit test fails until it is. */
export const FORGED_AGENT_POLICY_FILE = 'deploy/base/webhook/forged-agent.yaml';

/**
 * The webhook is not called for pods without an opt-in or status annotation (its `marked-pods`
 * condition): such a pod costs no call. The one forgery it could still carry, a container named
 * like a profile's agent, this policy refuses in the API server itself, once per AgentProfile (its
 * parameters), in exactly the namespaces the webhook serves. Every AgentProfile reserves its agent's
 * name there, in force or not.
 */
export function forgedAgentPolicy(name: string = FORGED_AGENT_POLICY_NAME) {
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicy',
    metadata: { name, labels: baseLabels('webhook') },
    spec: {
      // Fails closed like the webhook. The API server judges a policy's configuration (its
      // AgentProfile parameters resolvable) before its bindings and conditions: the selector here
      // keeps such an error to the namespaces the webhook serves.
      failurePolicy: 'Fail',
      paramKind: { apiVersion: AGENT_PROFILE_API_VERSION, kind: AGENT_PROFILE_KIND },
      matchConstraints: {
        resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['pods'] }],
        namespaceSelector: injectionNamespaceSelector(INSTALL_NAMES.namespace),
      },
      // The complement of the webhook's condition: the pods the webhook does not see (it refuses the others' forgeries).
      matchConditions: [{ name: 'not-marked', expression: `!(${markedPodExpression()})` }],
      variables: [
        { name: 'agent', expression: 'params.spec.container.name' },
        {
          name: 'carriesAgentName',
          expression: 'object.spec.containers.exists(c, c.name == variables.agent) || (has(object.spec.initContainers) && object.spec.initContainers.exists(c, c.name == variables.agent))',
        },
      ],
      validations: [
        {
          expression: '!variables.carriesAgentName',
          reason: 'Invalid',
          messageExpression:
            "'outrigger: profile ' + params.metadata.name + ': the pod has a container named ' + variables.agent + ', the name of the profile\\'s agent, and does not opt in; only the injector adds the agent (rename the container, or remove it and opt in with ' + params.spec.annotationPrefix + 'enable: \"true\")'",
        },
      ],
    },
  };
}

/** Binds the policy to every AgentProfile as parameters, denying, where the webhook applies. */
export function forgedAgentBinding(name: string = FORGED_AGENT_POLICY_NAME) {
  return everyProfileBinding(name, 'Deny');
}

/** deploy/base/webhook/forged-agent.yaml. */
export function forgedAgentPolicyYaml(): string {
  return generatedYaml(
    'libs/install/src/forged-agent-policy.ts',
    [
      "A pod that does not opt in never reaches the webhook; if it has a container named like a profile's",
      'agent, this policy refuses it (the webhook refuses the forgeries of the pods it sees).',
    ],
    [forgedAgentPolicy(), forgedAgentBinding()],
  );
}
