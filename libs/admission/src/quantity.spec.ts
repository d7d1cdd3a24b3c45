import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { QUANTITY } from './k8s-names.js';
import { parseQuantity } from './quantity.js';

describe('parseQuantity', () => {
  it.each([
    ['1E', { mantissa: 1n, exponent: 18, binaryPower: 0, exponentForm: false }],
    ['1Ei', { mantissa: 1n, exponent: 0, binaryPower: 6, exponentForm: false }],
    ['1E3', { mantissa: 1n, exponent: 3, binaryPower: 0, exponentForm: true }],
    ['1e-3', { mantissa: 1n, exponent: -3, binaryPower: 0, exponentForm: true }],
    ['-1.5m', { mantissa: -15n, exponent: -4, binaryPower: 0, exponentForm: false }],
    ['.5Gi', { mantissa: 5n, exponent: -1, binaryPower: 3, exponentForm: false }],
    ['0001', { mantissa: 1n, exponent: 0, binaryPower: 0, exponentForm: false }],
  ])('reads %s as Go does: E alone is exa, E with a number an exponent', (text, parsed) => {
    expect(parseQuantity(text)).toEqual(parsed);
  });

  it('refuses what is no quantity, and quantities beyond 64 digits or an exponent beyond ±64, whatever their size', () => {
    for (const text of ['', 'lots', '1 ', '1x', '1e', '1Ki5', 'e3']) expect(parseQuantity(text)).toBeUndefined();
    expect(parseQuantity('1e64')).toBeDefined();
    expect(parseQuantity(`${'9'.repeat(64)}`)).toBeDefined();
    for (const text of ['1e65', '1e-65', '1e99999999999', '1e-99999999999', `1e${'9'.repeat(400)}`, '9'.repeat(65), `0.${'1'.repeat(65)}`]) expect(parseQuantity(text)).toBeUndefined();
  });

  it('property: every text QUANTITY accepts is read or refused, never thrown on', () => {
    const text = fc.tuple(fc.constantFrom('', '+', '-'), fc.stringMatching(/^[0-9]{0,70}(\.[0-9]{0,70})?$/), fc.constantFrom('', 'Ki', 'Ei', 'm', 'E', 'e', 'E-', 'e+'), fc.bigInt({ min: 0n, max: 10n ** 20n }));
    fc.assert(
      fc.property(text, ([sign, number, suffix, exponent]) => {
        const written = `${sign}${number}${suffix}${suffix.startsWith('e') || suffix.startsWith('E-') ? exponent : ''}`;
        const parsed = parseQuantity(written);
        if (!QUANTITY.test(written)) expect(parsed).toBeUndefined();
        if (parsed) expect(Math.abs(parsed.exponent)).toBeLessThanOrEqual(64 + 64);
      }),
    );
  });
});
