/**
 * An env value that reaches the container exactly as given. Kubernetes expands `$(NAME)` and `$$`
 * in env values; with every `$` doubled, expansion only turns each `$$` back into `$`, so an
 * annotation can neither read another variable (a Secret the profile maps in) nor be altered.
 */
export function literalEnvValue(value: string): string {
  return value.replaceAll('$', '$$$$');
}

/**
 * Characters an annotation value may not carry into an env value: C0 and C1 controls (NUL cannot
 * even be passed in a process environment; newlines forge log lines), DEL, Unicode's line and
 * paragraph separators (newlines to JavaScript and many log readers), and the bidirectional
 * overrides and isolates that make text read differently from what it is.
 */
const FORBIDDEN_RANGES: readonly (readonly [number, number])[] = [
  [0x00, 0x1f],
  [0x7f, 0x9f],
  [0x2028, 0x2029],
  [0x202a, 0x202e],
  [0x2066, 0x2069],
];

/** The first forbidden character, as `U+XXXX`, or undefined when there is none. */
export function forbiddenCharacter(value: string): string | undefined {
  for (const char of value) {
    const code = char.codePointAt(0) ?? 0;
    if (FORBIDDEN_RANGES.some(([low, high]) => code >= low && code <= high)) return `U+${code.toString(16).toUpperCase().padStart(4, '0')}`;
  }
  return undefined;
}
