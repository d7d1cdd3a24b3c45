import { z } from 'zod';
import { celRule, LIST_MAX, NAME_MAX } from './crd-meta.js';

/**
 * Verbs that let a subject raise its own or someone else's permissions. The agent gets its role
 * because a pod was created; it must never be able to grant more than an admin opted into.
 */
export const FORBIDDEN_VERBS = ['escalate', 'bind', 'impersonate'] as const;
const FORBIDDEN_VERBS_CEL = FORBIDDEN_VERBS.map((v) => `'${v}'`).join(', ');

const WHY = 'creating a pod must never grant more than an admin opted into';

const nonEmpty = z.string().min(1, { error: 'must not be empty' }).meta({ maxLength: NAME_MAX });
const nonEmptyList = z.array(nonEmpty).min(1, { error: 'must list at least one entry' }).meta({ maxItems: LIST_MAX });
/** The CRD's side of the wildcard and lowercase checks below. */
const NAMES_RULES = [
  celRule("self.all(x, !x.contains('*'))", `wildcards are not allowed: ${WHY}; list each entry explicitly`),
  celRule('self.all(x, x == x.lowerAscii())', 'matches nothing: Kubernetes compares RBAC names exactly and they are lowercase'),
];

/**
 * rbac/v1 PolicyRule limited to what a namespaced agent needs: no wildcards, no escalation verbs,
 * no names in a case Kubernetes never matches. Grants that are escalation in practice are refused
 * one level up, where the profile's opt-out is known (escalation-rules.ts).
 */
export const policyRuleSchema = z
  .strictObject({
    apiGroups: z
      .array(z.string().meta({ maxLength: NAME_MAX }))
      .min(1, { error: 'must list at least one API group ("" is the core group)' })
      .meta({ maxItems: LIST_MAX, 'x-kubernetes-validations': NAMES_RULES }),
    resources: nonEmptyList.meta({ maxItems: LIST_MAX, 'x-kubernetes-validations': NAMES_RULES }),
    verbs: nonEmptyList.meta({
      maxItems: LIST_MAX,
      'x-kubernetes-validations': [
        ...NAMES_RULES,
        celRule(`self.all(x, !(x in [${FORBIDDEN_VERBS_CEL}]))`, 'the escalate, bind and impersonate verbs are not allowed: they let the agent grant or assume permissions'),
      ],
    }),
    resourceNames: z.array(nonEmpty).meta({ maxItems: LIST_MAX }).optional(),
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
