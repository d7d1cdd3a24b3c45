import { isJsonObject, type JsonValue } from './json-value.js';

/** RFC 6901: `~` must become `~0` before `/` becomes `~1`, or `/` would turn into `~01`. */
export function escapePointerToken(token: string): string {
  // Almost no Kubernetes key needs escaping: skip the two scans of replaceAll then.
  if (!token.includes('~') && !token.includes('/')) return token;
  return token.replaceAll('~', '~0').replaceAll('/', '~1');
}

/** The inverse of escapePointerToken: `~1` first, then `~0`, so `~01` reads back as `~1`. */
export function unescapePointerToken(token: string): string {
  if (!token.includes('~')) return token;
  return token.replaceAll('~1', '/').replaceAll('~0', '~');
}

export function jsonPointer(tokens: readonly string[]): string {
  return tokens.map((token) => `/${escapePointerToken(token)}`).join('');
}

export function pointerTokens(pointer: string): string[] {
  if (pointer === '') return [];
  return pointer.slice(1).split('/').map(unescapePointerToken);
}

/** The parent pointer and the last token, e.g. `/a/b~1c` → [`/a`, `b/c`]. */
export function splitPointer(pointer: string): [parent: string, last: string] {
  const index = pointer.lastIndexOf('/');
  return [pointer.slice(0, index), unescapePointerToken(pointer.slice(index + 1))];
}

/** The value at `pointer`, or undefined when any step is missing (never throws). */
export function valueAtPointer(document: JsonValue, pointer: string): JsonValue | undefined {
  let current: JsonValue | undefined = document;
  for (const token of pointerTokens(pointer)) {
    if (Array.isArray(current)) {
      if (!/^(0|[1-9][0-9]*)$/.test(token)) return undefined;
      current = current[Number(token)];
    } else if (isJsonObject(current)) {
      current = Object.prototype.hasOwnProperty.call(current, token) ? current[token] : undefined;
    } else {
      return undefined;
    }
    if (current === undefined) return undefined;
  }
  return current;
}
