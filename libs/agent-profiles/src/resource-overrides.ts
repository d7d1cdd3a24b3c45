import { z } from 'zod';
import { QUANTITY } from '@outrigger/admission';
import { celRule, listMap, NAME_MAX } from './crd-meta.js';

/**
 * What a profile lets namespaces and pods change in its agent, within bounds: CPU and memory
 * requests and limits. The annotation is `<prefix><resource>` (e.g. `xxl-agent/limits.memory`), on
 * the namespace (its default, set by whoever may edit namespaces) or on the pod (which wins).
 */
export const OVERRIDABLE_RESOURCES = ['requests.cpu', 'requests.memory', 'limits.cpu', 'limits.memory'] as const;
export type OverridableResource = (typeof OVERRIDABLE_RESOURCES)[number];

const NANO = 9;
const BINARY = ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'];
const DECIMAL: Readonly<Record<string, number>> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };

/** A quantity in billionths (rounded up), to compare two; undefined when it is not a quantity. */
export function quantityValue(text: string): bigint | undefined {
  if (!QUANTITY.test(text)) return undefined;
  const match = /^([+-]?)(\d*)(?:\.(\d*))?(.*)$/.exec(text);
  if (!match) return undefined;
  const [, sign = '', whole = '', fraction = '', suffix = ''] = match;
  let mantissa = BigInt(`${whole}${fraction}` || '0') * (sign === '-' ? -1n : 1n);
  let exponent = NANO - fraction.length;
  const binary = BINARY.indexOf(suffix);
  if (binary > 0) mantissa *= 1024n ** BigInt(binary);
  else if (/^[eE]/.test(suffix)) exponent += Number(suffix.slice(1));
  else exponent += DECIMAL[suffix] ?? 0;
  if (exponent >= 0) return mantissa * 10n ** BigInt(exponent);
  const divisor = 10n ** BigInt(-exponent);
  return mantissa / divisor + (mantissa % divisor > 0n ? 1n : 0n);
}

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
