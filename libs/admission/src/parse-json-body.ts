import { err, ok, type Result } from './result.js';

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Real pods nest about 20 levels deep. Anything past this cannot be a pod the API server accepts,
 * and recursive code further on (cloning, diffing) would overflow the stack on it.
 */
export const MAX_JSON_DEPTH = 1000;

/**
 * Decodes a request body (bytes or text) as JSON. Malformed UTF-8, an empty body or invalid JSON
 * become an error message instead of an exception, so the caller can answer 400.
 */
export function parseJsonBody(body: string | Uint8Array): Result<unknown> {
  let text: string;
  if (typeof body === 'string') {
    text = body.startsWith('\uFEFF') ? body.slice(1) : body;
  } else {
    try {
      text = utf8.decode(body);
    } catch {
      return err('body: is not valid UTF-8');
    }
  }
  if (text.trim() === '') return err('body: is empty');
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return err(`body: is not valid JSON (${reason})`);
  }
  if (jsonDepth(value, MAX_JSON_DEPTH) > MAX_JSON_DEPTH) return err(`body: is nested deeper than ${MAX_JSON_DEPTH} levels`);
  return ok(value);
}

/** Nesting depth of a parsed JSON value, counted without recursion; stops early past `limit`. */
export function jsonDepth(value: unknown, limit = Infinity): number {
  let deepest = 0;
  const stack: [unknown, number][] = [[value, 0]];
  for (let entry = stack.pop(); entry !== undefined; entry = stack.pop()) {
    const [node, depth] = entry;
    if (node === null || typeof node !== 'object') continue;
    if (depth + 1 > deepest) deepest = depth + 1;
    if (deepest > limit) return deepest;
    for (const child of Array.isArray(node) ? node : Object.values(node)) {
      if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
    }
  }
  return deepest;
}
