import { isJsonObject, type JsonValue } from '@outrigger/admission';

/**
 * Where two JSON values first differ, as a field path (`securityContext.capabilities.drop[0]`),
 * or undefined when they are equal. Object key order does not count; list order does. A member
 * one side has and the other lacks is a difference, so nothing unknown passes.
 */
export function jsonDifference(expected: JsonValue | undefined, actual: JsonValue | undefined, path = ''): string | undefined {
  if (expected === actual) return undefined;
  const here = path === '' ? '(the whole value)' : path;
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual)) return here;
    const length = Math.max(expected.length, actual.length);
    for (let index = 0; index < length; index++) {
      const difference = jsonDifference(expected[index], actual[index], `${path}[${index}]`);
      if (difference !== undefined) return difference;
    }
    return undefined;
  }
  if (!isJsonObject(expected) || !isJsonObject(actual)) return here;
  for (const key of Object.keys(expected)) {
    const difference = jsonDifference(expected[key], Object.hasOwn(actual, key) ? actual[key] : undefined, path === '' ? key : `${path}.${key}`);
    if (difference !== undefined) return difference;
  }
  const extra = Object.keys(actual).find((key) => !Object.hasOwn(expected, key));
  return extra === undefined ? undefined : path === '' ? extra : `${path}.${extra}`;
}

/** jsonDifference(...) === undefined, without building paths: the common case of a match is cheap. */
export function jsonEqual(expected: JsonValue | undefined, actual: JsonValue | undefined): boolean {
  if (expected === actual) return true;
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual) || actual.length !== expected.length) return false;
    for (let index = 0; index < expected.length; index++) if (!jsonEqual(expected[index], actual[index])) return false;
    return true;
  }
  if (!isJsonObject(expected) || !isJsonObject(actual)) return false;
  // for-in allocates no key arrays; JSON objects have no inherited enumerable members.
  let members = 0;
  for (const key in expected) {
    members++;
    if (!Object.hasOwn(actual, key) || !jsonEqual(expected[key], actual[key])) return false;
  }
  for (const _ in actual) members--;
  return members === 0;
}
