import type { AgentProfile, PolicyRule } from '@outrigger/agent-profiles';
import { type RevokedSubjects, type SaSubject, subjectKey } from './subjects.js';

import { MANAGED_BY_LABEL, MANAGED_BY_VALUE, NAMESPACE_LABEL, PROFILE_LABEL, REVOKED_ANNOTATION, REVOKED_UNTIL_ANNOTATION } from '@outrigger/agent-profiles';

export { MANAGED_BY_LABEL, MANAGED_BY_VALUE, NAMESPACE_LABEL, PROFILE_LABEL };
export const FIELD_MANAGER = 'outrigger-rbac-syncer';
export const RBAC_API_VERSION = 'rbac.authorization.k8s.io/v1';

export type ProfileRbac = NonNullable<AgentProfile['rbac']>;

export interface ClusterRoleObject {
  readonly apiVersion: typeof RBAC_API_VERSION;
  readonly kind: 'ClusterRole';
  readonly metadata: { readonly name: string; readonly labels: Record<string, string> };
  readonly rules: PolicyRule[];
}

export interface BindingObject {
  readonly apiVersion: typeof RBAC_API_VERSION;
  readonly kind: 'ClusterRoleBinding' | 'RoleBinding';
  readonly metadata: { readonly name: string; readonly namespace?: string; readonly labels: Record<string, string>; readonly annotations?: Record<string, string> };
  readonly roleRef: { readonly apiGroup: 'rbac.authorization.k8s.io'; readonly kind: 'ClusterRole'; readonly name: string };
  readonly subjects: SaSubject[];
}

export function managedLabels(profile: string): Record<string, string> {
  return { [MANAGED_BY_LABEL]: MANAGED_BY_VALUE, [PROFILE_LABEL]: profile };
}

export function isManaged(labels: Record<string, string> | undefined): boolean {
  return labels?.[MANAGED_BY_LABEL] === MANAGED_BY_VALUE;
}

/** The profile's ClusterRole: exactly its rules. */
export function desiredClusterRole(profile: string, rbac: ProfileRbac): ClusterRoleObject {
  return {
    apiVersion: RBAC_API_VERSION,
    kind: 'ClusterRole',
    metadata: { name: rbac.clusterRole, labels: managedLabels(profile) },
    rules: rbac.rules.map(cleanRule),
  };
}

/**
 * Where one namespace's ServiceAccounts are bound: its own object, so no namespace can fill (or
 * freeze) another's. A ClusterRoleBinding per namespace is named `<binding>.<namespace>` (a
 * namespace is a DNS label, so the last dot separates them) and labelled with the namespace.
 */
export function bindingIn(profile: string, rbac: ProfileRbac, namespace: string, subjects: readonly SaSubject[], revoked?: RevokedSubjects): BindingObject {
  const clusterWide = rbac.binding.kind === 'ClusterRoleBinding';
  return {
    apiVersion: RBAC_API_VERSION,
    kind: rbac.binding.kind,
    metadata: clusterWide
      ? { name: `${rbac.binding.name}.${namespace}`, labels: { ...managedLabels(profile), [NAMESPACE_LABEL]: namespace }, ...revokedAnnotations(revoked) }
      : { name: rbac.binding.name, namespace, labels: managedLabels(profile), ...revokedAnnotations(revoked) },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: rbac.clusterRole },
    subjects: [...subjects],
  };
}

/** A binding as the watch shows it (one of an earlier name, kind or version included), with `subjects` and `revoked` in place of its own. */
export function observedBindingWith(profile: string, binding: StoredBinding, subjects: readonly SaSubject[], revoked?: RevokedSubjects): BindingObject {
  const labels = { ...managedLabels(profile), ...(binding.kind === 'ClusterRoleBinding' && binding.namespace !== undefined ? { [NAMESPACE_LABEL]: binding.namespace } : {}) };
  return {
    apiVersion: RBAC_API_VERSION,
    kind: binding.kind,
    metadata: { name: binding.name, ...(binding.kind === 'RoleBinding' ? { namespace: binding.namespace } : {}), labels, ...revokedAnnotations(revoked) },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: binding.roleRef },
    subjects: [...subjects],
  };
}

/** What names a stored binding of ours: kind, name, the namespace it holds (a RoleBinding's own), its role. */
export interface StoredBinding {
  readonly kind: 'ClusterRoleBinding' | 'RoleBinding';
  readonly name: string;
  readonly namespace: string | undefined;
  readonly roleRef: string;
}

/** The annotations by which the exec guard still judges subjects removed a moment ago (none when there are none). */
function revokedAnnotations(revoked: RevokedSubjects | undefined): { annotations?: Record<string, string> } {
  if (!revoked || revoked.length === 0) return {};
  return { annotations: { [REVOKED_ANNOTATION]: revoked.map(subjectKey).join(' '), [REVOKED_UNTIL_ANNOTATION]: revoked.map((e) => e.untilMs).join(' ') } };
}

function cleanRule(rule: PolicyRule): PolicyRule {
  return {
    apiGroups: [...rule.apiGroups],
    resources: [...rule.resources],
    verbs: [...rule.verbs],
    ...(rule.resourceNames?.length ? { resourceNames: [...rule.resourceNames] } : {}),
  };
}

/** Does a stored rule list equal the desired one (order and absent/empty resourceNames aside)? */
export function sameRules(stored: unknown, desired: readonly PolicyRule[]): boolean {
  if (!Array.isArray(stored) || stored.length !== desired.length) return false;
  const norm = (r: Partial<PolicyRule>) =>
    JSON.stringify([r.apiGroups ?? [], r.resources ?? [], r.verbs ?? [], r.resourceNames ?? [], Object.keys(r).filter((k) => !['apiGroups', 'resources', 'verbs', 'resourceNames'].includes(k)).length]);
  const a = stored.map((r) => norm(r as Partial<PolicyRule>)).sort();
  const b = desired.map((r) => norm(r)).sort();
  return a.every((x, i) => x === b[i]);
}
