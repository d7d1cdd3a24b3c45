import { z } from 'zod';
import { parseQuantity, QUANTITY } from '@outrigger/admission';
import { celRule, listMap, NAME_MAX } from './crd-meta.js';

/**
 * What a profile lets namespaces and pods change in its agent, within bounds: CPU and memory
 * requests and limits. The annotation is `<prefix><resource>` (e.g. `xxl-agent/limits.memory`), on
 * the namespace (its default, set by whoever may edit namespaces) or on the pod (which wins).
 */
export const OVERRIDABLE_RESOURCES = ['requests.cpu', 'requests.memory', 'limits.cpu', 'limits.memory'] as const;
export type OverridableResource = (typeof OVERRIDABLE_RESOURCES)[number];

/** A quantity in billionths (rounded up), to compare two; undefined when it is not a quantity (parseQuantity). */
export function quantityValue(text: string): bigint | undefined {
  const parsed = parseQuantity(text);
  if (!parsed) return undefined;
  const mantissa = parsed.mantissa * 1024n ** BigInt(parsed.binaryPower);
  const exponent = parsed.exponent + NANO;
  if (exponent >= 0) return mantissa * 10n ** BigInt(exponent);
  const divisor = 10n ** BigInt(-exponent);
  return mantissa / divisor + (mantissa % divisor > 0n ? 1n : 0n);
}

const NANO = 9;

const quantity = z.string().regex(QUANTITY, { error: 'must be a Kubernetes quantity like 100m or 64Mi' }).meta({ maxLength: NAME_MAX });
const MIN_ABOVE_MAX = 'min must not be above max';

export const overridesSchema = z.strictObject({
  resources: z
    .array(
      z
        .strictObject({ resource: z.enum(OVERRIDABLE_RESOURCES), min: quantity, max: quantity })
        .refine(({ min, max }) => (quantityValue(min) ?? 0n) <= (quantityValue(max) ?? 0n), { error: MIN_ABOVE_MAX, path: ['min'] })
        .meta({ 'x-kubernetes-validations': [celRule('!quantity(self.max).isLessThan(quantity(self.min))', MIN_ABOVE_MAX, '.min')] }),
    )
    .min(1)
    .meta({ ...listMap('resource'), description: 'The agent resources a namespace or pod annotation <prefix><resource> may set, within [min, max].' }),
});
export type ResourceOverrides = z.output<typeof overridesSchema>;
