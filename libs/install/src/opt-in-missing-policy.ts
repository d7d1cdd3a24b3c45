import { INJECT_ANNOTATION, injectionNamespaceSelector } from '@outrigger/admission';
import { AGENT_PROFILE_API_VERSION, AGENT_PROFILE_KIND, ENABLE_SUFFIX } from '@outrigger/agent-profiles';
import { everyProfileBinding } from './every-profile-binding.js';
import { generatedYaml } from './exec-guard.js';
import { baseLabels } from './install-files.js';
import { INSTALL_NAMES } from './install-names.js';

export const OPT_IN_MISSING_POLICY_NAME = INSTALL_NAMES.optInMissingPolicy;
/** Generated from this module by `npm run generate:exec-guard`; a unit test fails until it is. */
export const OPT_IN_MISSING_POLICY_FILE = 'deploy/base/webhook/opt-in-missing.yaml';

/** Where each kind keeps the metadata of the pods it makes; `dyn`, since one expression serves every kind. */
const POD_METADATA = "request.kind.kind == 'CronJob' ? dyn(object).spec.jobTemplate.spec.template.metadata : dyn(object).spec.template.metadata";

/**
 * A workload whose pod template carries annotations under a profile's prefix without opting in to
 * that profile (a misspelt `<prefix>enable`, or the opt-in forgotten) gets no agent, and the webhook,
 * which such pods never reach, cannot say so. This policy warns whoever writes the workload, once per
 * AgentProfile (its parameters), in the namespaces the webhook serves; never a denial. Not pods: a
 * policy on pod CREATE costs every pod of a labelled namespace API server time (the pod-create
 * bench), and a controller that creates them reads no warnings.
 */
export function optInMissingPolicy(name: string = OPT_IN_MISSING_POLICY_NAME) {
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicy',
    metadata: { name, labels: baseLabels('webhook') },
    spec: {
      // A warning must never keep a workload from being written.
      failurePolicy: 'Ignore',
      paramKind: { apiVersion: AGENT_PROFILE_API_VERSION, kind: AGENT_PROFILE_KIND },
      matchConstraints: {
        resourceRules: [
          { apiGroups: ['apps'], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['deployments', 'statefulsets', 'daemonsets', 'replicasets'] },
          { apiGroups: ['batch'], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['jobs', 'cronjobs'] },
        ],
        namespaceSelector: injectionNamespaceSelector(INSTALL_NAMES.namespace),
      },
      variables: [
        { name: 'pod', expression: POD_METADATA },
        { name: 'annotations', expression: 'has(variables.pod.annotations) ? variables.pod.annotations : {}' },
        { name: 'prefix', expression: 'params.spec.annotationPrefix' },
        // In the map's order: lists' sort() needs a newer Kubernetes than MINIMUM_KUBERNETES.
        { name: 'underPrefix', expression: 'variables.annotations.filter(k, k.startsWith(variables.prefix))' },
        {
          name: 'optsIn',
          expression: `(variables.prefix + '${ENABLE_SUFFIX}') in variables.annotations || ('${INJECT_ANNOTATION}' in variables.annotations && variables.annotations['${INJECT_ANNOTATION}'].split(',').exists(n, n.trim() == params.metadata.name))`,
        },
      ],
      validations: [
        {
          expression: 'size(variables.underPrefix) == 0 || variables.optsIn',
          messageExpression: `'outrigger: profile ' + params.metadata.name + ': the pod template carries ' + variables.underPrefix.join(', ') + ', under the profile\\'s prefix, but does not opt in to it (' + variables.prefix + '${ENABLE_SUFFIX}: "true", or ' + params.metadata.name + ' in ${INJECT_ANNOTATION}): no agent is injected'`,
        },
      ],
    },
  };
}

/** Binds the policy to every AgentProfile as parameters, warning only, where the webhook applies. */
export function optInMissingBinding(name: string = OPT_IN_MISSING_POLICY_NAME) {
  return everyProfileBinding(name, 'Warn');
}

/** deploy/base/webhook/opt-in-missing.yaml. */
export function optInMissingPolicyYaml(): string {
  return generatedYaml(
    'libs/install/src/opt-in-missing-policy.ts',
    [
      'A pod, or a pod template, with annotations under a profile\'s prefix that does not opt in to that',
      'profile gets no agent; this policy warns whoever writes it (a warning, never a denial).',
    ],
    [optInMissingPolicy(), optInMissingBinding()],
  );
}
