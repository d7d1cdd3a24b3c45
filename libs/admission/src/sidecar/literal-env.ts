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
 * even be passed in a process environment; newlines forge log lines), DEL, and the bidirectional
 * overrides and isolates that make text read differently from what it is.
 */
const FORBIDDEN = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/u;

/** The first forbidden character, as `U+XXXX`, or undefined when there is none. */
export function forbiddenCharacter(value: string): string | undefined {
  const found = FORBIDDEN.exec(value)?.[0];
  return found === undefined ? undefined : `U+${(found.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}`;
}
