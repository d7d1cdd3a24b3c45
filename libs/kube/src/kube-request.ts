import { KubeApiError } from './api-error.js';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface KubeRequest {
  readonly method?: HttpMethod;
  /** Absolute API path, e.g. `/api/v1/namespaces/ns/pods`. */
  readonly path: string;
  readonly query?: Readonly<Record<string, string | number | boolean | undefined>>;
  /** Sent as JSON unless it is already a string. */
  readonly body?: unknown;
  readonly contentType?: string;
  /** The Accept header; `application/json` by default. */
  readonly accept?: string;
  readonly signal?: AbortSignal;
  /** Abort if the whole request (headers and body) takes longer; none by default (watches). */
  readonly timeoutMs?: number;
}

export interface KubeResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: { text(): Promise<string>; stream(): ReadableStream<Uint8Array> };
}

/**
 * A connection to one API server with its credentials: the only thing the rest of this lib needs.
 * Requests are raw (JSON in, JSON out, any status returned): decoding into model classes drops
 * fields the models do not know, and watches must stream.
 */
export interface KubeClient {
  /** The API server's URL, e.g. `https://10.0.0.1:443`. */
  readonly server: string;
  request(request: KubeRequest): Promise<KubeResponse>;
}

/** A request whose 2xx JSON body is returned as is; anything else throws a KubeApiError with the Status text as body. */
export async function kubeJson<T>(kc: KubeClient, request: KubeRequest): Promise<T> {
  const response = await kc.request(request);
  const text = await response.body.text();
  if (response.status < 200 || response.status > 299) {
    throw new KubeApiError(response.status, `${request.method ?? 'GET'} ${request.path}`, text, response.headers);
  }
  return (text ? JSON.parse(text) : undefined) as T;
}

/** The request's URL on `server` (a base path in the server URL is kept). */
export function requestUrl(server: string, request: KubeRequest): URL {
  const url = new URL(server.replace(/\/+$/, '') + request.path);
  for (const [key, value] of Object.entries(request.query ?? {})) {
    if (value !== undefined) url.searchParams.set(key, String(value));
  }
  return url;
}

/** The caller's signal and the request timeout as one signal, or undefined when there is neither. */
export function requestSignal(request: KubeRequest): AbortSignal | undefined {
  const signals = [request.signal, request.timeoutMs ? AbortSignal.timeout(request.timeoutMs) : undefined].filter((s) => s !== undefined);
  return signals.length > 1 ? AbortSignal.any(signals) : signals[0];
}
