/** A non-2xx answer from the API server; `body` is the response text (usually a metav1.Status as JSON). */
export class KubeApiError extends Error {
  override readonly name = 'KubeApiError';

  constructor(
    readonly code: number,
    context: string,
    readonly body: string,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(`HTTP ${code} from ${context}`);
  }
}

/** What a caller should do about a failed Kubernetes API call. */
export type ApiErrorKind =
  | 'notFound'
  | 'conflict'
  | 'gone'
  | 'forbidden'
  | 'unauthorized'
  | 'invalid'
  | 'badRequest'
  | 'retryable'
  | 'aborted'
  | 'unknown';

export interface ApiErrorInfo {
  readonly kind: ApiErrorKind;
  /** HTTP status (or the Status `code` of a watch ERROR event); undefined for network errors. */
  readonly code?: number;
  /** Status `reason`, e.g. `AlreadyExists`, `Expired`, `Conflict`. */
  readonly reason?: string;
  /** A one-line message for logs and events, including the Status `message` when there is one. */
  readonly message: string;
  /** Worth retrying the same request later (throttling, server errors, network trouble). */
  readonly retryable: boolean;
}

/** The `metav1.Status` an apiserver returns with an error (only the fields we use). */
export interface KubeStatus {
  readonly kind?: string;
  readonly status?: string;
  readonly message?: string;
  readonly reason?: string;
  readonly code?: number;
}

// Node's fetch (undici) reports connection trouble as `TypeError: fetch failed` with a system error as cause.
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'UND_ERR_CLOSED',
]);

/** Classifies any error thrown by a KubeClient, a watch stream or a client-node typed API call, in one place. */
export function classifyApiError(error: unknown): ApiErrorInfo {
  const code = statusCodeOf(error);
  if (code !== undefined) {
    const status = statusOf(error);
    const kind = kindForCode(code);
    const detail = status?.message ?? (isHttpError(error) ? undefined : messageOf(error));
    const reason = status?.reason;
    const message = `HTTP ${code}${reason ? ` ${reason}` : ''}${detail ? `: ${detail}` : ''}`;
    return { kind, code, reason, message, retryable: kind === 'retryable' };
  }
  if (isAbort(error)) return { kind: 'aborted', message: messageOf(error), retryable: true };
  const network = networkCodeOf(error);
  if (network) return { kind: 'retryable', message: `network error ${network}: ${messageOf(error)}`, retryable: true };
  return { kind: 'unknown', message: messageOf(error), retryable: false };
}

export const isNotFound = (error: unknown): boolean => classifyApiError(error).kind === 'notFound';
export const isConflict = (error: unknown): boolean => classifyApiError(error).kind === 'conflict';
export const isGone = (error: unknown): boolean => classifyApiError(error).kind === 'gone';
export const isForbidden = (error: unknown): boolean => classifyApiError(error).kind === 'forbidden';
export const isInvalid = (error: unknown): boolean => classifyApiError(error).kind === 'invalid';
export const isRetryable = (error: unknown): boolean => classifyApiError(error).retryable;
export const describeApiError = (error: unknown): string => classifyApiError(error).message;

/** A KubeApiError carrying a Status, for errors that arrive inside a watch stream rather than as a response. */
export function apiErrorFromStatus(status: KubeStatus, context = 'ERROR event in a watch stream'): KubeApiError {
  return new KubeApiError(status.code ?? 500, context, JSON.stringify(status));
}

function kindForCode(code: number): ApiErrorKind {
  switch (code) {
    case 400:
      return 'badRequest';
    case 401:
      return 'unauthorized';
    case 403:
      return 'forbidden';
    case 404:
      return 'notFound';
    case 409:
      return 'conflict';
    case 410:
      return 'gone';
    case 422:
      return 'invalid';
    case 408:
    case 429:
      return 'retryable';
    default:
      return code >= 500 ? 'retryable' : 'unknown';
  }
}

// KubeApiError, and client-node's ApiException from typed calls: a numeric `code` with a body and headers
// (system errors have string codes; DOMException has a numeric one but no body).
function isHttpError(error: unknown): error is { code: number } {
  if (error instanceof KubeApiError) return true;
  return error instanceof Error && typeof (error as { code?: unknown }).code === 'number' && 'body' in error && 'headers' in error;
}

function statusCodeOf(error: unknown): number | undefined {
  if (isHttpError(error)) return error.code;
  const code = (error as { statusCode?: unknown } | undefined)?.statusCode;
  return typeof code === 'number' ? code : undefined;
}

/** The Status in an error's body: raw text (KubeApiError, client-node 2.x) or, from a few client-node calls, an object. */
function statusOf(error: unknown): KubeStatus | undefined {
  const body = (error as { body?: unknown } | undefined)?.body;
  if (typeof body === 'string') {
    try {
      const parsed = JSON.parse(body) as unknown;
      return typeof parsed === 'object' && parsed !== null ? (parsed as KubeStatus) : { message: body.slice(0, 500) };
    } catch {
      return body ? { message: body.slice(0, 500) } : undefined;
    }
  }
  return typeof body === 'object' && body !== null ? (body as KubeStatus) : undefined;
}

function isAbort(error: unknown): boolean {
  const name = (error as { name?: unknown } | undefined)?.name;
  return name === 'AbortError' || name === 'TimeoutError';
}

function networkCodeOf(error: unknown): string | undefined {
  for (let e: unknown = error, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && NETWORK_CODES.has(code)) return code;
  }
  if (error instanceof TypeError && error.message === 'fetch failed') return 'fetch failed';
  return undefined;
}

function messageOf(error: unknown): string {
  if (error instanceof Error) {
    const cause = (error as { cause?: unknown }).cause;
    return cause instanceof Error ? `${error.message} (${cause.message})` : error.message;
  }
  return String(error);
}
