import { z } from 'zod';
import { celRule, LIST_MAX, NAME_MAX } from './crd-meta.js';

const VALUES_RULE = 'values must be non-empty for In and NotIn, and empty for Exists and DoesNotExist';

const labelKey = z.string().min(1).meta({ maxLength: NAME_MAX });
const labelValue = z.string().meta({ maxLength: 63 });

/** A label selector as Kubernetes writes one (metav1.LabelSelector); `{}` selects everything. */
export const labelSelectorSchema = z.strictObject({
  matchLabels: z.record(labelKey, labelValue).optional(),
  matchExpressions: z
    .array(
      z
        .strictObject({
          key: labelKey,
          operator: z.enum(['In', 'NotIn', 'Exists', 'DoesNotExist']),
          values: z.array(labelValue).meta({ maxItems: LIST_MAX }).optional(),
        })
        .refine((e) => (e.operator === 'In' || e.operator === 'NotIn' ? (e.values?.length ?? 0) > 0 : (e.values?.length ?? 0) === 0), { error: VALUES_RULE })
        .meta({ 'x-kubernetes-validations': [celRule("self.operator in ['In', 'NotIn'] ? has(self.values) && size(self.values) > 0 : !has(self.values) || size(self.values) == 0", VALUES_RULE)] }),
    )
    .meta({ maxItems: LIST_MAX })
    .optional(),
});

export type LabelSelector = z.output<typeof labelSelectorSchema>;

/** Whether `labels` match `selector`, with the semantics of metav1.LabelSelector. */
export function selectsLabels(selector: LabelSelector, labels: Readonly<Record<string, string>>): boolean {
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) if (labels[key] !== value) return false;
  for (const { key, operator, values = [] } of selector.matchExpressions ?? []) {
    const has = Object.hasOwn(labels, key);
    const value = labels[key];
    if (operator === 'Exists' && !has) return false;
    if (operator === 'DoesNotExist' && has) return false;
    if (operator === 'In' && !(has && values.includes(value as string))) return false;
    if (operator === 'NotIn' && has && values.includes(value as string)) return false;
  }
  return true;
}
