import type { PolicyTypesView } from './install-state.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- an API object read field by field

/**
 * Kubernetes types a policy against each kind its rules name without a wildcard group, version or
 * resource and without a subresource (apiserver's TypeChecker), and nothing of a policy naming none.
 */
export function policyTypesView(name: string, file: string, policy: Json | undefined): PolicyTypesView | undefined {
  if (!policy) return undefined;
  const exact = (values: unknown, forbidden: RegExp) => Array.isArray(values) && values.some((v) => typeof v === 'string' && !forbidden.test(v));
  const rules: Json[] = Array.isArray(policy.spec?.matchConstraints?.resourceRules) ? policy.spec.matchConstraints.resourceRules : [];
  const typed = rules.some((r) => exact(r.apiGroups, /\*/) && exact(r.apiVersions, /\*/) && exact(r.resources, /[*/]/));
  // No typeChecking once checked is none found: server-side apply drops the emptied field the controller owned.
  const checked = Number(policy.status?.observedGeneration ?? 0) >= Number(policy.metadata?.generation ?? 1);
  const warnings: Json[] = Array.isArray(policy.status?.typeChecking?.expressionWarnings) ? policy.status.typeChecking.expressionWarnings : [];
  return { name, file, typed, warnings: checked ? warnings.map((w) => ({ fieldRef: String(w.fieldRef), warning: String(w.warning) })) : undefined };
}
