const UNIT_MS: Readonly<Record<string, number>> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const PART = /(\d+(?:\.\d+)?)(ms|s|m|h|d)/gy;

/**
 * `90d`, `12h`, `1h30m`, `45s`, `500ms` → milliseconds. A bare number is rejected: the unit is
 * never guessed. Throws a message naming the accepted forms.
 */
export function parseDuration(text: string): number {
  const value = text.trim();
  let total = 0;
  let matched = 0;
  PART.lastIndex = 0;
  for (let m = PART.exec(value); m; m = PART.exec(value)) {
    total += Number(m[1]) * (UNIT_MS[m[2] as string] as number);
    matched = PART.lastIndex;
  }
  if (value === '' || matched !== value.length) {
    throw new Error(`"${text}" is not a duration: use a number with a unit (ms, s, m, h, d), e.g. 90d, 12h, 1h30m, 45s`);
  }
  return total;
}
