import { BINARY_SUFFIXES, DECIMAL_SUFFIXES, parseQuantity } from '@outrigger/admission';

const DECIMAL_NAMES = new Map(Object.entries(DECIMAL_SUFFIXES).map(([suffix, exponent]) => [exponent, suffix]));

/**
 * A quantity of a resource list as the API server stores it (Go's resource.Quantity.String() after
 * SetDefaults_ResourceList): "0.5" is "500m", "1024Mi" is "1Gi", "1000" is "1k", "1e3" stays "1e3",
 * and precision below milli rounds up ("1n" is "1m"). A number is read as its JSON text, as the API
 * server reads an unquoted quantity. Undefined for anything that is not a quantity or lies outside
 * what this models (a difference, never a match).
 */
export function canonicalQuantity(value: unknown): string | undefined {
  const text = typeof value === 'number' ? JSON.stringify(value) : value;
  const parsed = typeof text === 'string' ? parseQuantity(text) : undefined;
  if (!parsed) return undefined;
  const { binaryPower: binary, exponentForm } = parsed;
  let { mantissa, exponent } = parsed;
  if (binary > 0) mantissa *= 1024n ** BigInt(binary);
  if (mantissa === 0n) return '0';
  if (exponent < -3) {
    // Resource lists are rounded up to milli when defaulted.
    const divisor = 10n ** BigInt(-3 - exponent);
    const rounded = mantissa / divisor + (mantissa % divisor === 0n ? 0n : mantissa > 0n ? 1n : -1n);
    [mantissa, exponent] = [rounded, -3];
  }
  if (binary > 0) {
    const integer = exponent >= 0 ? mantissa * 10n ** BigInt(exponent) : mantissa % 10n ** BigInt(-exponent) === 0n ? mantissa / 10n ** BigInt(-exponent) : undefined;
    // Below 1Ki, or not whole, Go shows a binary quantity in decimal form.
    if (integer !== undefined && (integer >= 1024n || integer <= -1024n)) return base1024(integer);
  }
  return base1000(mantissa, exponent, exponentForm);
}

function base1024(value: bigint): string | undefined {
  let amount = value;
  let power = 0;
  while ((amount >= 1024n || amount <= -1024n) && amount % 1024n === 0n) {
    amount /= 1024n;
    power += 1;
  }
  const suffix = BINARY_SUFFIXES[power];
  return suffix === undefined ? undefined : `${amount}${suffix}`;
}

function base1000(mantissa: bigint, exponent: number, exponentForm: boolean): string | undefined {
  let amount = mantissa;
  let power = exponent;
  while ((amount >= 10n || amount <= -10n) && amount % 10n === 0n) {
    amount /= 10n;
    power += 1;
  }
  // Go lowers the exponent to a multiple of three.
  const excess = ((power % 3) + 3) % 3;
  amount *= 10n ** BigInt(excess);
  power -= excess;
  if (exponentForm) return power === 0 ? `${amount}` : `${amount}e${power}`;
  const suffix = DECIMAL_NAMES.get(power);
  return suffix === undefined ? undefined : `${amount}${suffix}`;
}
