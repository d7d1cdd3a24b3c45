import { RE2JS } from 're2js';

/**
 * Checks shared by profile validation (for defaults) and by injection (for pod annotations), so
 * both always agree on what a valid value is.
 */

/** A parameter's `pattern`, compiled: whether a whole value matches it. */
export interface ParameterPattern {
  test(value: string): boolean;
}

// Patterns come from profiles, so there are few; the bound only stops a churn of edits from growing it.
const COMPILED_MAX = 1_024;
const compiled = new Map<string, ParameterPattern>();

/**
 * RE2 syntax and semantics, as Kubernetes' own `pattern`s, matched in time linear in the value: a
 * tenant's value can never make a backtracking engine stall the injector on an admin's pattern.
 * Anchored: the whole value must match. Throws with the RE2 parser's message on invalid syntax.
 */
export function compileParameterPattern(pattern: string): ParameterPattern {
  let found = compiled.get(pattern);
  if (found === undefined) {
    const re = RE2JS.compile(pattern);
    found = { test: (value) => re.testExact(value) };
    if (compiled.size >= COMPILED_MAX) compiled.clear();
    compiled.set(pattern, found);
  }
  return found;
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
