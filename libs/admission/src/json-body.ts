import { err, ok, type Result } from './result.js';

const utf8 = new TextDecoder('utf-8', { fatal: true });

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
  try {
    return ok(JSON.parse(text) as unknown);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return err(`body: is not valid JSON (${reason})`);
  }
}
