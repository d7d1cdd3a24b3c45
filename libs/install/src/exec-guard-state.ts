import { MANAGED_BY_LABEL, MANAGED_BY_VALUE, type RbacBindingKind } from '@outrigger/agent-profiles';
import { EXEC_GUARD_FILE, EXEC_GUARD_KINDS, execGuardPolicy, guardRules, guardShortfall, type GuardRules } from './exec-guard.js';

/** The exec guard's ValidatingAdmissionPolicy, as far as it decides whether the guard is in force. */
export interface GuardPolicyView {
  readonly failurePolicy: string;
  readonly paramKind: string;
  /** Its match rules and CEL, to compare with the shipped guard's. */
  readonly rules: GuardRules;
}

/** The exec guard's ValidatingAdmissionPolicyBinding, likewise. */
export interface GuardBindingView {
  readonly policyName: string;
  readonly deny: boolean;
  readonly selectsOurBindings: boolean;
  /** Where a RoleBindings' guard looks for its parameters, when not in the namespace of the request (either guard: it must not be set). */
  readonly paramNamespace: string | undefined;
  /** The one parameter it takes, when named (it must take all ours, by the selector). */
  readonly paramName: string | undefined;
  /** Whether its matchResources narrows what the policy judges. */
  readonly narrowed: boolean;
}

const SHIPPED_RULES = new Map(EXEC_GUARD_KINDS.map((kind) => [kind, guardRules(execGuardPolicy(kind).spec)]));

/** A stored ValidatingAdmissionPolicy, read where it enters (the syncer's watch, the CLI's check). */
export function projectGuardPolicy(obj: unknown): GuardPolicyView {
  const spec = (obj as { spec?: { failurePolicy?: string; paramKind?: { apiVersion?: string; kind?: string } } }).spec;
  return {
    failurePolicy: spec?.failurePolicy ?? 'Fail',
    paramKind: `${spec?.paramKind?.apiVersion ?? ''}/${spec?.paramKind?.kind ?? ''}`,
    rules: guardRules(spec),
  };
}

/** A stored ValidatingAdmissionPolicyBinding, likewise. */
export function projectGuardBinding(obj: unknown): GuardBindingView {
  const spec = (
    obj as {
      spec?: {
        policyName?: string;
        validationActions?: string[];
        paramRef?: { name?: string; namespace?: string; selector?: { matchLabels?: Record<string, string>; matchExpressions?: unknown[] } };
        matchResources?: Record<string, unknown>;
      };
    }
  ).spec;
  const selector = spec?.paramRef?.selector;
  return {
    policyName: spec?.policyName ?? '',
    deny: spec?.validationActions?.includes('Deny') ?? false,
    selectsOurBindings: selector?.matchLabels?.[MANAGED_BY_LABEL] === MANAGED_BY_VALUE && (selector.matchExpressions ?? []).length === 0 && Object.keys(selector.matchLabels).length === 1,
    paramNamespace: spec?.paramRef?.namespace || undefined,
    paramName: spec?.paramRef?.name || undefined,
    // Empty selectors (as the API server defaults them) and no resource rules judge all the policy matches.
    narrowed: Object.entries(spec?.matchResources ?? {}).some(([key, value]) =>
      key === 'matchPolicy' ? false : Array.isArray(value) ? value.length > 0 : typeof value === 'object' && value !== null && Object.keys(value).length > 0,
    ),
  };
}

/**
 * Why the exec guard of the agents bound by `kind` is not in force (empty when it is): the policy
 * and its binding exist, the policy fails closed, takes our bindings of that kind as parameters
 * and refuses at least what the shipped guard refuses (guardShortfall), and the binding denies,
 * selects exactly our bindings, where the request goes, and judges all it matches. Without it a
 * ClusterRoleBinding would give every agent exec into every namespace, a RoleBinding into every
 * pod of its own, so the syncer keeps such bindings empty meanwhile and `outrigger check` fails.
 */
export function execGuardShortfalls(kind: RbacBindingKind, name: string, policy: GuardPolicyView | undefined, binding: GuardBindingView | undefined): string[] {
  const problems: string[] = [];
  if (!policy) problems.push(`ValidatingAdmissionPolicy ${name} not found`);
  else {
    if (policy.failurePolicy !== 'Fail') problems.push(`ValidatingAdmissionPolicy ${name} has failurePolicy ${policy.failurePolicy}, not Fail`);
    if (policy.paramKind !== `rbac.authorization.k8s.io/v1/${kind}`) problems.push(`ValidatingAdmissionPolicy ${name} takes ${policy.paramKind} as parameters, not ${kind}s`);
    const shortfall = guardShortfall(policy.rules, SHIPPED_RULES.get(kind) as GuardRules);
    if (shortfall !== undefined) problems.push(`ValidatingAdmissionPolicy ${name} refuses less than the shipped guard: ${shortfall}`);
  }
  if (!binding) problems.push(`ValidatingAdmissionPolicyBinding ${name} not found`);
  else {
    if (binding.policyName !== name) problems.push(`ValidatingAdmissionPolicyBinding ${name} binds policy ${JSON.stringify(binding.policyName)}, not ${name}`);
    if (!binding.deny) problems.push(`ValidatingAdmissionPolicyBinding ${name} does not have the Deny action`);
    if (!binding.selectsOurBindings) problems.push(`ValidatingAdmissionPolicyBinding ${name} does not select exactly the ${kind}s labelled ${MANAGED_BY_LABEL}=${MANAGED_BY_VALUE}`);
    if (binding.paramNamespace !== undefined) problems.push(`ValidatingAdmissionPolicyBinding ${name} looks for its parameters only in namespace ${binding.paramNamespace}`);
    if (binding.paramName !== undefined) problems.push(`ValidatingAdmissionPolicyBinding ${name} takes only the parameter named ${binding.paramName}`);
    if (binding.narrowed) problems.push(`ValidatingAdmissionPolicyBinding ${name} narrows the requests it judges (matchResources)`);
  }
  return problems;
}

/**
 * The repair of a guard not in force: only what is missing is created; a changed guard is put back
 * as shipped (never an overlay or base applied over the install).
 */
export function execGuardRemedy(policy: GuardPolicyView | undefined, binding: GuardBindingView | undefined): { readonly what: string; readonly command: string } {
  if (policy && binding) return { what: 'put the shipped guard back', command: `outrigger restore --replace -f ${EXEC_GUARD_FILE}` };
  return { what: policy || binding ? 'create what is missing, changing nothing else' : 'create it', command: `outrigger restore -f ${EXEC_GUARD_FILE}` };
}

/** The shortfalls and their remedy in one line (the syncer's status, Event and /readyz); undefined when the guard is in force. */
export function execGuardProblem(kind: RbacBindingKind, name: string, policy: GuardPolicyView | undefined, binding: GuardBindingView | undefined): string | undefined {
  const problems = execGuardShortfalls(kind, name, policy, binding);
  if (problems.length === 0) return undefined;
  const remedy = execGuardRemedy(policy, binding);
  // The syncer cannot tell how it was installed, and a Helm release's guard comes back only from Helm (objects put back by hand lack its ownership).
  return `exec guard not in force: ${problems.join('; ')}; ${remedy.what}: ${remedy.command} (installed with Helm: outrigger check prints Helm's repair)`;
}
