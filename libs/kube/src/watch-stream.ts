import { KubeApiError } from './api-error.js';
import type { KubeObject } from './kube-object.js';
import type { KubeClient } from './kube-request.js';

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

export interface WatchEvent {
  readonly type: WatchEventType;
  /** The object; for ERROR a metav1.Status; for BOOKMARK only apiVersion, kind and metadata.resourceVersion. */
  readonly object: KubeObject;
}

/**
 * One watch request: calls `onEvent` for each line of the stream and resolves when the server
 * ends it (timeoutSeconds reached, apiserver shutting down). Rejects with a KubeApiError on a
 * non-200 answer (with the Status text, which client-node's Watch discards), with an AbortError
 * when `signal` fires, or with the network error. A throw from `onEvent` ends the stream with it.
 *
 * Why not client-node's Watch: it can only be aborted once the response headers arrived, its
 * default 30 s inactivity timeout kills quiet but healthy watches (bookmarks come every ~60 s),
 * and it drops unparsable lines silently.
 */
export async function streamWatch(
  kc: KubeClient,
  path: string,
  query: Readonly<Record<string, string | number | boolean | undefined>>,
  signal: AbortSignal,
  onEvent: (event: WatchEvent) => void,
): Promise<void> {
  const response = await kc.request({ path, query: { ...query, watch: true }, signal });
  if (response.status !== 200) {
    throw new KubeApiError(response.status, `watch ${path}`, await response.body.text(), response.headers);
  }
  const stream = response.body.stream();
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  // The pieces of an unfinished line: joined once its newline arrives, never re-scanned (an event can be MiBs).
  let pieces: string[] = [];
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      let text = decoder.decode(value, { stream: true });
      let newline: number;
      while ((newline = text.indexOf('\n')) >= 0) {
        pieces.push(text.slice(0, newline));
        text = text.slice(newline + 1);
        const line = pieces.join('').trim();
        pieces = [];
        if (line) onEvent(parseEvent(line, path));
      }
      if (text) pieces.push(text);
    }
    const rest = (pieces.join('') + decoder.decode()).trim();
    if (rest) onEvent(parseEvent(rest, path));
  } finally {
    reader.releaseLock();
    // Frees the connection when we stop early (callback threw); a no-op after a normal end.
    await stream.cancel().catch(() => undefined);
  }
}

function parseEvent(line: string, path: string): WatchEvent {
  let event: WatchEvent;
  try {
    event = JSON.parse(line) as WatchEvent;
  } catch {
    throw new Error(`watch ${path}: unparsable line ${line.slice(0, 200)}`);
  }
  if (typeof event?.type !== 'string' || typeof event.object !== 'object' || event.object === null) {
    throw new Error(`watch ${path}: malformed event ${line.slice(0, 200)}`);
  }
  return event;
}
