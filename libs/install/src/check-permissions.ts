import { AGENT_PROFILE_GROUP, AGENT_PROFILE_PLURAL } from '@outrigger/agent-profiles';
import type { RequiredPermission } from '@outrigger/kube';
import { CERT_MANAGER_CONFINEMENT_NAME } from './cert-manager-confinement.js';
import { execGuardName } from './exec-guard.js';
import { FORGED_AGENT_POLICY_NAME } from './forged-agent-policy.js';
import { INSTALL_NAMES } from './install-names.js';
import { shippedPolicies } from './shipped-policies.js';
import { SYNCER_CONFINEMENT_NAME } from './syncer-confinement.js';

const ADMISSION = 'admissionregistration.k8s.io';

/**
 * What `outrigger check` reads of an install with deploy/base's names, and nothing more: granted to
 * the ServiceAccount of the Helm chart's test, which runs it in the cluster. Reads only, except the
 * SubjectAccessReviews by which it asks what each service may do; by name wherever check reads by
 * name. No Secret: check judges the certificate each injector replica reports on /readyz.
 */
export function checkPermissions(namespace: string): RequiredPermission[] {
  const policies = [execGuardName('ClusterRoleBinding'), execGuardName('RoleBinding'), SYNCER_CONFINEMENT_NAME, CERT_MANAGER_CONFINEMENT_NAME, FORGED_AGENT_POLICY_NAME];
  return [
    { verb: 'get', group: 'apiextensions.k8s.io', resource: 'customresourcedefinitions', name: `${AGENT_PROFILE_PLURAL}.${AGENT_PROFILE_GROUP}` },
    { verb: 'get', group: ADMISSION, resource: 'mutatingwebhookconfigurations', name: INSTALL_NAMES.webhook },
    ...['validatingadmissionpolicies', 'validatingadmissionpolicybindings'].flatMap((resource) => policies.map((name) => ({ verb: 'get', group: ADMISSION, resource, name }))),
    // Every shipped policy, for its status.typeChecking; the bindings above only, of the policies that refuse.
    ...shippedPolicies()
      .filter(({ name }) => !policies.includes(name))
      .map(({ name }) => ({ verb: 'get', group: ADMISSION, resource: 'validatingadmissionpolicies', name })),
    { verb: 'list', group: AGENT_PROFILE_GROUP, resource: 'agentprofiles' },
    { verb: 'list', group: '', resource: 'namespaces' },
    // Every opted-in pod, and the ReplicaSet or Job by which its workload is found.
    { verb: 'list', group: '', resource: 'pods' },
    { verb: 'get', group: 'apps', resource: 'replicasets' },
    { verb: 'get', group: 'batch', resource: 'jobs' },
    { verb: 'create', group: 'authorization.k8s.io', resource: 'subjectaccessreviews' },
    { verb: 'list', group: 'apps', resource: 'deployments', namespace },
    { verb: 'get', group: 'apps', resource: 'deployments', namespace, name: INSTALL_NAMES.rbacSyncer },
    { verb: 'list', group: 'coordination.k8s.io', resource: 'leases', namespace },
    { verb: 'list', group: 'apps', resource: 'controllerrevisions', namespace },
    { verb: 'get', group: '', resource: 'services', namespace, name: INSTALL_NAMES.injector },
    { verb: 'list', group: 'discovery.k8s.io', resource: 'endpointslices', namespace },
    // Each injector replica's /readyz, through the API server.
    { verb: 'get', group: '', resource: 'pods', subresource: 'proxy', namespace },
  ];
}
