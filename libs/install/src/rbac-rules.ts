import type { RequiredPermission } from '@outrigger/kube';

/** One RBAC PolicyRule (rbac.authorization.k8s.io/v1). */
export interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
  resourceNames?: string[];
}

/** Rules granting exactly these permissions: one rule per resource and name, its verbs together, each once. */
export function rbacRules(permissions: readonly RequiredPermission[]): PolicyRule[] {
  const rules = new Map<string, PolicyRule>();
  for (const p of permissions) {
    const resource = p.subresource ? `${p.resource}/${p.subresource}` : p.resource;
    const key = JSON.stringify([p.group, resource, p.name ?? '']);
    const rule = rules.get(key) ?? { apiGroups: [p.group], resources: [resource], verbs: [], ...(p.name ? { resourceNames: [p.name] } : {}) };
    if (!rule.verbs.includes(p.verb)) rule.verbs.push(p.verb);
    rules.set(key, rule);
  }
  return [...rules.values()];
}
