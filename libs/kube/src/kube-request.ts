import { ApiException, IsomorphicFetchHttpLibrary, RequestContext, type HttpMethod, type KubeConfig } from '@kubernetes/client-node';

export interface KubeRequest {
  readonly method?: HttpMethod;
  /** Absolute API path, e.g. `/api/v1/namespaces/ns/pods`. */
  readonly path: string;
  readonly query?: Readonly<Record<string, string | number | boolean | undefined>>;
  /** Sent as JSON unless it is already a string. */
  readonly body?: unknown;
  readonly contentType?: string;
  readonly signal?: AbortSignal;
  /** Abort if the whole request (headers and body) takes longer; none by default (watches). */
  readonly timeoutMs?: number;
}

export interface KubeResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: { text(): Promise<string>; stream(): ReadableStream<Uint8Array> | null };
}

const http = new IsomorphicFetchHttpLibrary();

/**
 * A raw request through client-node's own HTTP stack (its undici, TLS agent and authenticators),
 * for what the typed APIs do badly: they decode into model classes that drop fields they do not
 * know and turn timestamps into Dates, and they cannot stream. Any status is returned.
 */
export async function kubeRequest(kc: KubeConfig, request: KubeRequest): Promise<KubeResponse> {
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new Error('kubeconfig has no current cluster');
  const url = new URL(cluster.server.replace(/\/+$/, '') + request.path);
  for (const [key, value] of Object.entries(request.query ?? {})) {
    if (value !== undefined) url.searchParams.set(key, String(value));
  }
  const ctx = new RequestContext(url.toString(), request.method ?? 'GET');
  ctx.setHeaderParam('Accept', 'application/json');
  if (request.body !== undefined) {
    ctx.setHeaderParam('Content-Type', request.contentType ?? 'application/json');
    ctx.setBody(typeof request.body === 'string' ? request.body : JSON.stringify(request.body));
  }
  const signals = [request.signal, request.timeoutMs ? AbortSignal.timeout(request.timeoutMs) : undefined].filter((s) => s !== undefined);
  if (signals.length > 0) ctx.setSignal(signals.length === 1 ? signals[0] : AbortSignal.any(signals));
  await kc.applySecurityAuthentication(ctx);
  const response = await http.send(ctx).toPromise();
  return { status: response.httpStatusCode, headers: response.headers, body: response.body };
}

/** A request whose 2xx JSON body is returned as is; anything else throws an ApiException with the Status text as body. */
export async function kubeJson<T>(kc: KubeConfig, request: KubeRequest): Promise<T> {
  const response = await kubeRequest(kc, request);
  const text = await response.body.text();
  if (response.status < 200 || response.status > 299) {
    throw new ApiException(response.status, `${request.method ?? 'GET'} ${request.path}`, text, response.headers);
  }
  return (text ? JSON.parse(text) : undefined) as T;
}
