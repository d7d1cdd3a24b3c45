import { ApiException } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { KubeApiError, apiErrorFromStatus, classifyApiError, describeApiError, isConflict, isGone, isNotFound, isRetryable } from './api-error.js';

const status = (code: number, reason: string, message: string) =>
  new KubeApiError(code, 'GET /api/v1/x', JSON.stringify({ kind: 'Status', status: 'Failure', code, reason, message }), {});

describe('classifyApiError', () => {
  it.each([
    [404, 'notFound', false],
    [409, 'conflict', false],
    [410, 'gone', false],
    [403, 'forbidden', false],
    [401, 'unauthorized', false],
    [422, 'invalid', false],
    [400, 'badRequest', false],
    [429, 'retryable', true],
    [500, 'retryable', true],
    [503, 'retryable', true],
  ] as const)('HTTP %i is %s', (code, kind, retryable) => {
    const info = classifyApiError(status(code, 'Reason', 'details'));
    expect(info).toMatchObject({ code, kind, retryable, reason: 'Reason' });
  });

  it('puts the Status message into a short readable line (not client-node headers dump)', () => {
    const error = status(404, 'NotFound', 'pods "web" not found');
    expect(describeApiError(error)).toBe('HTTP 404 NotFound: pods "web" not found');
    expect(isNotFound(error)).toBe(true);
  });

  it('copes with a body that is an object, plain text or missing (client-node typed calls too)', () => {
    expect(classifyApiError(new KubeApiError(502, 'x', 'Bad Gateway')).message).toBe('HTTP 502: Bad Gateway');
    expect(classifyApiError(new KubeApiError(401, 'x', '')).message).toBe('HTTP 401');
    expect(classifyApiError(new ApiException(409, 'x', { message: 'taken', reason: 'Conflict' }, {})).message).toBe('HTTP 409 Conflict: taken');
    expect(classifyApiError(new ApiException(502, 'x', 'Bad Gateway', {})).message).toBe('HTTP 502: Bad Gateway');
    expect(classifyApiError(new ApiException(401, 'Unauthorized', undefined, {})).message).toBe('HTTP 401');
  });

  it('turns a watch ERROR Status into the same classification', () => {
    const error = apiErrorFromStatus({ kind: 'Status', code: 410, reason: 'Expired', message: 'too old resource version: 1 (200)' });
    expect(isGone(error)).toBe(true);
    expect(describeApiError(error)).toContain('too old resource version');
  });

  it('reads the status code of errors shaped like client-node Watch errors', () => {
    expect(isConflict(Object.assign(new Error('Conflict'), { statusCode: 409 }))).toBe(true);
  });

  it('treats connection failures and aborts as retryable', () => {
    const refused = new TypeError('fetch failed', { cause: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }) });
    expect(classifyApiError(refused)).toMatchObject({ kind: 'retryable', retryable: true });
    expect(classifyApiError(refused).message).toContain('ECONNREFUSED');
    expect(classifyApiError(new DOMException('aborted', 'AbortError'))).toMatchObject({ kind: 'aborted', retryable: true });
  });

  it('does not retry programming errors', () => {
    expect(isRetryable(new Error('boom'))).toBe(false);
    expect(classifyApiError('a string').message).toBe('a string');
  });
});
