import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { escapePointerToken, jsonPointer, pointerTokens, splitPointer, unescapePointerToken, valueAtPointer } from './json-pointer.js';

describe('RFC 6901 escaping', () => {
  it('escapes ~ before / so a slash never turns into ~01', () => {
    expect(escapePointerToken('a/b')).toBe('a~1b');
    expect(escapePointerToken('a~b')).toBe('a~0b');
    expect(escapePointerToken('~1')).toBe('~01');
    expect(escapePointerToken('/~')).toBe('~1~0');
    expect(escapePointerToken('xxl-agent/status')).toBe('xxl-agent~1status');
  });

  it('unescapes ~1 before ~0 so ~01 reads back as ~1', () => {
    expect(unescapePointerToken('~01')).toBe('~1');
    expect(unescapePointerToken('~1~0')).toBe('/~');
  });

  it('round-trips any token', () => {
    fc.assert(fc.property(fc.string(), (token) => unescapePointerToken(escapePointerToken(token)) === token));
  });

  it('round-trips any path', () => {
    fc.assert(
      fc.property(fc.array(fc.string()), (tokens) => {
        expect(pointerTokens(jsonPointer(tokens))).toEqual(tokens);
      }),
    );
  });

  it('splits off the last token, unescaped', () => {
    expect(splitPointer('/metadata/annotations/a~1b~0c')).toEqual(['/metadata/annotations', 'a/b~c']);
  });
});

describe('valueAtPointer', () => {
  const document = { a: { 'b/c': [10, { '~': 'tilde' }] }, empty: '' };

  it('follows objects and array indexes', () => {
    expect(valueAtPointer(document, '/a/b~1c/1/~0')).toBe('tilde');
    expect(valueAtPointer(document, '/a/b~1c/0')).toBe(10);
    expect(valueAtPointer(document, '')).toBe(document);
    expect(valueAtPointer(document, '/empty')).toBe('');
  });

  it('returns undefined for anything missing instead of throwing', () => {
    expect(valueAtPointer(document, '/a/missing/x')).toBeUndefined();
    expect(valueAtPointer(document, '/a/b~1c/2')).toBeUndefined();
    expect(valueAtPointer(document, '/a/b~1c/-')).toBeUndefined();
    expect(valueAtPointer(document, '/a/b~1c/01')).toBeUndefined();
    expect(valueAtPointer(document, '/empty/length')).toBeUndefined();
    expect(valueAtPointer(document, '/constructor')).toBeUndefined();
  });
});
