import { z } from 'zod';

/**
 * Verbs that let a subject raise its own or someone else's permissions. The agent gets its role
 * because a pod was created; it must never be able to grant more than an admin opted into.
 */
export const FORBIDDEN_VERBS = ['escalate', 'bind', 'impersonate'] as const;

const WHY = 'creating a pod must never grant more than an admin opted into';

const nonEmptyList = z.array(z.string().min(1, { error: 'must not be empty' })).min(1, { error: 'must list at least one entry' });

/**
 * rbac/v1 PolicyRule limited to what a namespaced agent needs: no wildcards, no escalation verbs,
 * no names in a case Kubernetes never matches. Grants that are escalation in practice are refused
 * one level up, where the profile's opt-out is known (escalation-rules.ts).
 */
export const policyRuleSchema = z
  .strictObject({
    apiGroups: z.array(z.string()).min(1, { error: 'must list at least one API group ("" is the core group)' }),
    resources: nonEmptyList,
    verbs: nonEmptyList,
    resourceNames: z.array(z.string().min(1, { error: 'must not be empty' })).optional(),
  })
  .superRefine((rule, ctx) => {
    for (const field of ['apiGroups', 'resources', 'verbs'] as const) {
      rule[field].forEach((entry, index) => {
        if (entry.includes('*')) {
          ctx.addIssue({
            code: 'custom',
            path: [field, index],
            message: `wildcard ${JSON.stringify(entry)} is not allowed: ${WHY}; list each ${field === 'apiGroups' ? 'API group' : field.slice(0, -1)} explicitly`,
          });
        } else if (entry !== entry.toLowerCase()) {
          // Kubernetes compares these exactly, and API groups, resources and verbs are lowercase:
          // such an entry grants nothing, so it is a typo (and must not dodge the escalation table).
          ctx.addIssue({
            code: 'custom',
            path: [field, index],
            message: `${JSON.stringify(entry)} matches nothing: Kubernetes compares RBAC names exactly and they are lowercase; write ${JSON.stringify(entry.toLowerCase())}`,
          });
        }
      });
    }
    rule.verbs.forEach((verb, index) => {
      if ((FORBIDDEN_VERBS as readonly string[]).includes(verb)) {
        ctx.addIssue({
          code: 'custom',
          path: ['verbs', index],
          message: `verb ${JSON.stringify(verb)} is not allowed: it lets the agent grant or assume permissions, and ${WHY}`,
        });
      }
    });
  });

export type PolicyRule = z.output<typeof policyRuleSchema>;
