import { Agent, request } from 'node:https';
import type { HostileCase } from './hostile-reviews.ts';

/** What one hostile request came to, from the client's side. */
export type OutcomeKind = '200' | '4xx' | '5xx' | 'other-status' | 'error' | 'timeout';

export interface Outcome {
  readonly kind: OutcomeKind;
  readonly status?: number;
  readonly body?: Buffer;
  readonly error?: string;
  readonly ms: number;
}

export function fuzzAgent(ca: string, maxSockets = 16): Agent {
  return new Agent({ ca, keepAlive: true, maxSockets });
}

/** POSTs one case to /mutate; never rejects. */
export function send(agent: Agent, url: string, c: HostileCase, timeoutMs: number): Promise<Outcome> {
  const started = performance.now();
  return new Promise((done) => {
    let settled = false;
    const finish = (o: Omit<Outcome, 'ms'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      done({ ...o, ms: performance.now() - started });
    };
    const headers: Record<string, string | number> = { 'content-length': c.body.byteLength };
    if (c.contentType !== undefined) headers['content-type'] = c.contentType;
    const req = request(url, { method: 'POST', agent, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', (e) => finish({ kind: 'error', error: e.message }));
      res.on('end', () => {
        const status = res.statusCode ?? 0;
        const kind: OutcomeKind = status === 200 ? '200' : status >= 400 && status < 500 ? '4xx' : status >= 500 ? '5xx' : 'other-status';
        finish({ kind, status, body: Buffer.concat(chunks) });
      });
    });
    const timer = setTimeout(() => {
      finish({ kind: 'timeout', error: `no answer within ${timeoutMs} ms` });
      req.destroy();
    }, timeoutMs);
    req.on('error', (e: NodeJS.ErrnoException) => finish({ kind: 'error', error: `${e.code ?? ''} ${e.message}`.trim() }));
    req.end(c.body);
  });
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The uid and apiVersion the reply must echo, when the request body carries them. */
function expectations(c: HostileCase): { uid?: string; apiVersion?: unknown } {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(c.body);
  } catch {
    return {};
  }
  const body = parse(text.startsWith('\uFEFF') ? text.slice(1) : text);
  if (!isObject(body)) return {};
  const request = body['request'];
  const uid = isObject(request) && typeof request['uid'] === 'string' && request['uid'] !== '' ? request['uid'] : undefined;
  return { uid, apiVersion: body['apiVersion'] };
}

/**
 * The contract for any input: 200 with a well-formed AdmissionReview echoing the request's uid and
 * apiVersion, or a 4xx with a JSON message. Returns what is wrong, or undefined.
 */
export function violation(c: HostileCase, o: Outcome): string | undefined {
  if (c.mayCloseEarly && o.kind === 'error' && /^(EPIPE|ECONNRESET)\b/.test(o.error ?? '')) return undefined;
  if (o.kind === 'error' || o.kind === 'timeout') return `${o.kind}: ${o.error}`;
  if (c.expectStatus !== undefined && o.status !== c.expectStatus) return `HTTP ${o.status}, expected ${c.expectStatus}: ${o.body?.toString('utf8').slice(0, 200)}`;
  const text = o.body?.toString('utf8') ?? '';
  const reply = parse(text);
  if (o.kind === '4xx') {
    if (!isObject(reply)) return `HTTP ${o.status} without a JSON body: ${text.slice(0, 200)}`;
    const message = reply['message'];
    const ok = (typeof message === 'string' && message.length > 0) || (Array.isArray(message) && message.length > 0);
    return ok ? undefined : `HTTP ${o.status} without a message: ${text.slice(0, 200)}`;
  }
  if (o.kind !== '200') return `HTTP ${o.status}: ${text.slice(0, 300)}`;
  if (!isObject(reply)) return `200 without a JSON object: ${text.slice(0, 200)}`;
  const { uid, apiVersion } = expectations(c);
  if (reply['kind'] !== 'AdmissionReview') return `200 with kind ${JSON.stringify(reply['kind'])}`;
  if (reply['apiVersion'] !== apiVersion) return `200 with apiVersion ${JSON.stringify(reply['apiVersion'])}, request had ${JSON.stringify(apiVersion)}`;
  const response = reply['response'];
  if (!isObject(response)) return '200 without a response object';
  if (uid === undefined) return '200 for a request without a valid uid';
  if (response['uid'] !== uid) return `200 with response.uid ${JSON.stringify(String(response['uid']).slice(0, 80))}, request had ${JSON.stringify(uid.slice(0, 80))}`;
  if (typeof response['allowed'] !== 'boolean') return '200 without response.allowed';
  if (response['patch'] !== undefined && (typeof response['patch'] !== 'string' || response['patchType'] !== 'JSONPatch')) return '200 with a malformed patch';
  // An internal error admits the pod unchecked: hostile input must meet a check, not a throw.
  const warnings = Array.isArray(response['warnings']) ? response['warnings'].map(String) : [];
  const internal = warnings.find((w) => w.includes('after an internal error'));
  if (internal !== undefined) return `200 admitted after an internal error: ${internal.slice(0, 200)}`;
  return undefined;
}

/** Runs `cases` with `concurrency` requests in flight; calls `onResult` for each. */
export async function runCases(
  cases: Iterable<HostileCase>,
  options: { readonly agent: Agent; readonly url: string; readonly concurrency: number; readonly timeoutMs: number },
  onResult: (c: HostileCase, o: Outcome) => void,
): Promise<void> {
  const iterator = cases[Symbol.iterator]();
  const worker = async () => {
    for (let next = iterator.next(); !next.done; next = iterator.next()) {
      onResult(next.value, await send(options.agent, options.url, next.value, options.timeoutMs));
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, worker));
}
