/**
 * Checks shared by profile validation (for defaults) and by injection (for pod annotations), so
 * both always agree on what a valid value is.
 */

/** Anchored semantics: the whole value must match, as with a Kubernetes `pattern`. */
export function compileParameterPattern(pattern: string): RegExp {
  return new RegExp(`^(?:${pattern})$`, 'u');
}

/** An absolute http or https URL with a host. */
export function isHttpUrl(value: string): boolean {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return false;
  }
  return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
}
