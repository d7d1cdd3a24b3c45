import { z } from 'zod';
import { LIST_MAX, NAME_MAX } from './crd-meta.js';
import type { AgentProfile } from './profile-schema.js';

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
        .refine((e) => (e.operator === 'In' || e.operator === 'NotIn' ? (e.values?.length ?? 0) > 0 : (e.values?.length ?? 0) === 0), {
          error: 'values must be non-empty for In and NotIn, and empty for Exists and DoesNotExist',
        }),
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

/** The agent fields a canary may change: what an upgrade changes, nothing that widens what the agent may do. */
export const CANARY_FIELDS = ['image', 'imagePullPolicy', 'command', 'args', 'env', 'resources'] as const;

/**
 * The two agents a profile injects while a change is staged: `stable` for every namespace, and
 * `canary` (the container with the canary's fields) for the namespaces its selector picks. Each
 * is a profile without `canary`, so each has the hash of what it injects: promoting a canary (its
 * fields become the container's, `canary` removed) makes the profile hash as the canary did, and
 * rolling back (removing `canary`) makes it hash as before the canary: in both cases the pods
 * already running the agent that stays are current.
 */
export interface AgentVariants {
  readonly stable: AgentProfile;
  readonly canary?: { readonly profile: AgentProfile; readonly namespaceSelector: LabelSelector };
}

const variants = new WeakMap<AgentProfile, AgentVariants>();

export function agentVariants(profile: AgentProfile): AgentVariants {
  let known = variants.get(profile);
  if (known) return known;
  const { canary, ...withoutCanary } = profile;
  if (!canary) {
    known = { stable: profile };
  } else {
    const { namespaceSelector, ...fields } = canary;
    known = { stable: withoutCanary, canary: { profile: { ...withoutCanary, container: { ...withoutCanary.container, ...fields } }, namespaceSelector } };
  }
  variants.set(profile, known);
  return known;
}

/** The agent a pod in a namespace with these labels gets. */
export function agentFor(profile: AgentProfile, namespaceLabels: Readonly<Record<string, string>>): AgentProfile {
  const { stable, canary } = agentVariants(profile);
  return canary && selectsLabels(canary.namespaceSelector, namespaceLabels) ? canary.profile : stable;
}
