import type { KubeObject } from '@outrigger/kube';
import { MANAGED_BY_LABEL, MANAGED_BY_VALUE } from './rbac-objects.js';

/** The exec guard's ValidatingAdmissionPolicy, as far as it decides whether the guard is in force. */
export interface GuardPolicyView {
  readonly failurePolicy: string;
  readonly paramKind: string;
}

/** The exec guard's ValidatingAdmissionPolicyBinding, likewise. */
export interface GuardBindingView {
  readonly policyName: string;
  readonly deny: boolean;
  readonly selectsOurBindings: boolean;
}

export function projectGuardPolicy(obj: KubeObject): GuardPolicyView {
  const spec = (obj as { spec?: { failurePolicy?: string; paramKind?: { apiVersion?: string; kind?: string } } }).spec;
  return {
    failurePolicy: spec?.failurePolicy ?? 'Fail',
    paramKind: `${spec?.paramKind?.apiVersion ?? ''}/${spec?.paramKind?.kind ?? ''}`,
  };
}

export function projectGuardBinding(obj: KubeObject): GuardBindingView {
  const spec = (
    obj as {
      spec?: { policyName?: string; validationActions?: string[]; paramRef?: { selector?: { matchLabels?: Record<string, string>; matchExpressions?: unknown[] } } };
    }
  ).spec;
  const selector = spec?.paramRef?.selector;
  return {
    policyName: spec?.policyName ?? '',
    deny: spec?.validationActions?.includes('Deny') ?? false,
    selectsOurBindings: selector?.matchLabels?.[MANAGED_BY_LABEL] === MANAGED_BY_VALUE && (selector.matchExpressions ?? []).length === 0 && Object.keys(selector.matchLabels).length === 1,
  };
}

/**
 * Why the exec guard is not in force, or undefined when it is: the policy and its binding exist,
 * the policy fails closed and takes our ClusterRoleBindings as parameters, and the binding denies
 * and selects exactly our bindings. Without it a ClusterRoleBinding would give every agent exec
 * into every namespace, so the syncer keeps such bindings empty meanwhile.
 */
export function execGuardProblem(name: string, policy: GuardPolicyView | undefined, binding: GuardBindingView | undefined): string | undefined {
  const problems: string[] = [];
  if (!policy) problems.push(`ValidatingAdmissionPolicy ${name} not found`);
  else {
    if (policy.failurePolicy !== 'Fail') problems.push(`ValidatingAdmissionPolicy ${name} has failurePolicy ${policy.failurePolicy}, not Fail`);
    if (policy.paramKind !== 'rbac.authorization.k8s.io/v1/ClusterRoleBinding') problems.push(`ValidatingAdmissionPolicy ${name} takes ${policy.paramKind} as parameters, not ClusterRoleBindings`);
  }
  if (!binding) problems.push(`ValidatingAdmissionPolicyBinding ${name} not found`);
  else {
    if (binding.policyName !== name) problems.push(`ValidatingAdmissionPolicyBinding ${name} binds policy ${JSON.stringify(binding.policyName)}, not ${name}`);
    if (!binding.deny) problems.push(`ValidatingAdmissionPolicyBinding ${name} does not have the Deny action`);
    if (!binding.selectsOurBindings) problems.push(`ValidatingAdmissionPolicyBinding ${name} does not select exactly the ClusterRoleBindings labelled ${MANAGED_BY_LABEL}=${MANAGED_BY_VALUE}`);
  }
  return problems.length === 0 ? undefined : `exec guard not in force: ${problems.join('; ')} (install deploy/base/rbac-syncer/exec-guard.yaml)`;
}
