import { QUANTITY } from './k8s-names.js';

/** A resource.Quantity read exactly: its value is mantissa × 10^exponent × 1024^binaryPower. */
export interface ParsedQuantity {
  readonly mantissa: bigint;
  readonly exponent: number;
  /** 1 for Ki … 6 for Ei; 0 for a decimal quantity. */
  readonly binaryPower: number;
  /** Written as `<number>e<exponent>` (Go keeps that form when it stores the quantity). */
  readonly exponentForm: boolean;
}

/** By power of 1024: '' is 1, 'Ki' 1024 … */
export const BINARY_SUFFIXES: readonly string[] = ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'];
/** By suffix, its power of ten. */
export const DECIMAL_SUFFIXES: Readonly<Record<string, number>> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
/**
 * Bounds on significant digits and on the exponent: far beyond any real resource, and they keep
 * the big-integer arithmetic of every caller cheap whatever a pod's annotation or field says.
 */
const MAX_DIGITS = 64;
const MAX_EXPONENT = 64;

/**
 * A quantity as Go's resource.ParseQuantity reads it, or undefined when it is not one or lies
 * beyond the bounds above. `E` alone is the exa suffix; `E3` or `e3` is an exponent.
 */
export function parseQuantity(text: string): ParsedQuantity | undefined {
  if (text.length > MAX_DIGITS * 2 || !QUANTITY.test(text)) return undefined;
  const match = /^([+-]?)(\d*)(?:\.(\d*))?(.*)$/.exec(text);
  if (!match) return undefined;
  const [, sign = '', whole = '', fraction = '', suffix = ''] = match;
  const digits = `${whole}${fraction}`.replace(/^0+/, '');
  if (digits.length > MAX_DIGITS) return undefined;
  const binaryPower = Math.max(0, BINARY_SUFFIXES.indexOf(suffix));
  const exponentForm = binaryPower === 0 && suffix.length > 1 && (suffix[0] === 'e' || suffix[0] === 'E');
  const written = exponentForm ? Number(suffix.slice(1)) : binaryPower > 0 ? 0 : (DECIMAL_SUFFIXES[suffix] ?? 0);
  if (!Number.isSafeInteger(written) || Math.abs(written) > MAX_EXPONENT) return undefined;
  const mantissa = BigInt(digits || '0') * (sign === '-' ? -1n : 1n);
  return { mantissa, exponent: written - fraction.length, binaryPower, exponentForm };
}
