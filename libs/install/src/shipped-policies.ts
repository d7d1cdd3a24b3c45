import { CERT_MANAGER_CONFINEMENT_FILE, CERT_MANAGER_CONFINEMENT_NAME } from './cert-manager-confinement.js';
import { EXEC_GUARD_FILE, EXEC_GUARD_NAME, execGuardName } from './exec-guard.js';
import { FORGED_AGENT_POLICY_FILE, FORGED_AGENT_POLICY_NAME } from './forged-agent-policy.js';
import { OPT_IN_AFTER_CREATION_POLICY_FILE, OPT_IN_AFTER_CREATION_POLICY_NAME } from './opt-in-after-creation-policy.js';
import { OPT_IN_MISSING_POLICY_FILE, OPT_IN_MISSING_POLICY_NAME } from './opt-in-missing-policy.js';
import { SYNCER_CONFINEMENT_FILE, SYNCER_CONFINEMENT_NAME } from './syncer-confinement.js';

export interface ShippedPolicy {
  readonly name: string;
  /** The deploy/base file it is generated to, which `outrigger restore` puts back from. */
  readonly file: string;
}

/**
 * Every ValidatingAdmissionPolicy deploy/base ships (deploy/tests holds the two to each other), the
 * exec guard's under the base name the rbac-syncer is given.
 */
export function shippedPolicies(execGuardBase: string = EXEC_GUARD_NAME): readonly ShippedPolicy[] {
  return [
    { name: execGuardName('ClusterRoleBinding', execGuardBase), file: EXEC_GUARD_FILE },
    { name: execGuardName('RoleBinding', execGuardBase), file: EXEC_GUARD_FILE },
    { name: SYNCER_CONFINEMENT_NAME, file: SYNCER_CONFINEMENT_FILE },
    { name: CERT_MANAGER_CONFINEMENT_NAME, file: CERT_MANAGER_CONFINEMENT_FILE },
    { name: FORGED_AGENT_POLICY_NAME, file: FORGED_AGENT_POLICY_FILE },
    { name: OPT_IN_MISSING_POLICY_NAME, file: OPT_IN_MISSING_POLICY_FILE },
    { name: OPT_IN_AFTER_CREATION_POLICY_NAME, file: OPT_IN_AFTER_CREATION_POLICY_FILE },
  ];
}
