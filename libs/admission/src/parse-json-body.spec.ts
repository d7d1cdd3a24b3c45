import { describe, expect, it } from 'vitest';
import { jsonDepth, MAX_JSON_DEPTH, parseJsonBody } from './parse-json-body.js';

describe('parseJsonBody', () => {
  it('decodes a UTF-8 buffer', () => {
    expect(parseJsonBody(Buffer.from('{"a":"ü"}', 'utf8'))).toEqual({ ok: true, value: { a: 'ü' } });
  });

  it('decodes a string and drops a byte order mark', () => {
    expect(parseJsonBody('\uFEFF[1,2]')).toEqual({ ok: true, value: [1, 2] });
    expect(parseJsonBody(Buffer.from('\uFEFF{}', 'utf8'))).toEqual({ ok: true, value: {} });
  });

  it('reports malformed JSON instead of throwing', () => {
    const result = parseJsonBody('{"kind": "AdmissionReview",');
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error).toMatch(/^body: is not valid JSON \(.+\)$/);
  });

  it('reports an empty body', () => {
    expect(parseJsonBody('')).toEqual({ ok: false, error: 'body: is empty' });
    expect(parseJsonBody(new Uint8Array())).toEqual({ ok: false, error: 'body: is empty' });
    expect(parseJsonBody(' \n')).toEqual({ ok: false, error: 'body: is empty' });
  });

  it('reports invalid UTF-8', () => {
    expect(parseJsonBody(new Uint8Array([0x7b, 0xff, 0x7d]))).toEqual({ ok: false, error: 'body: is not valid UTF-8' });
  });

  it('survives deeply nested input', () => {
    const deep = `${'['.repeat(200_000)}${']'.repeat(200_000)}`;
    expect(() => parseJsonBody(deep)).not.toThrow();
    expect(parseJsonBody('['.repeat(200_000)).ok).toBe(false);
  });
});

describe('nesting limit', () => {
  const nested = (levels: number) => '['.repeat(levels) + ']'.repeat(levels);

  it('counts depth without recursion, even far past the stack limit', () => {
    expect(jsonDepth({ a: [1, { b: null }] })).toBe(3);
    expect(jsonDepth(JSON.parse(nested(200_000)))).toBe(200_000);
  });

  it('accepts the limit and refuses one level more, naming the reason', () => {
    expect(parseJsonBody(nested(MAX_JSON_DEPTH)).ok).toBe(true);
    expect(parseJsonBody(nested(MAX_JSON_DEPTH + 1))).toEqual({ ok: false, error: `body: is nested deeper than ${MAX_JSON_DEPTH} levels` });
  });
});
