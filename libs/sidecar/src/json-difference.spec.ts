import { describe, expect, it } from 'vitest';
import { jsonDifference, jsonEqual } from './json-difference.js';

describe('jsonDifference', () => {
  it('is undefined for equal values, whatever the key order', () => {
    expect(jsonDifference({ a: 1, b: [{ c: 'x', d: null }] }, { b: [{ d: null, c: 'x' }], a: 1 })).toBeUndefined();
  });

  it('names the first field that differs, is missing or is extra', () => {
    expect(jsonDifference({ a: { b: [1, 2] } }, { a: { b: [1, 3] } })).toBe('a.b[1]');
    expect(jsonDifference({ a: 1, b: 2 }, { a: 1 })).toBe('b');
    expect(jsonDifference({ a: 1 }, { a: 1, command: ['sh'] })).toBe('command');
    expect(jsonDifference({ a: [1] }, { a: [1, 2] })).toBe('a[1]');
    expect(jsonDifference({ a: '1' }, { a: 1 })).toBe('a');
    expect(jsonDifference([], {})).toBe('(the whole value)');
  });

  it('reads own members only: a `constructor` or `__proto__` key is data', () => {
    expect(jsonDifference({}, JSON.parse('{"__proto__": {"x": 1}}') as never)).toBe('__proto__');
    expect(jsonDifference({ a: 1 }, { a: 1, constructor: 1 })).toBe('constructor');
  });
});

describe('jsonEqual', () => {
  it('agrees with jsonDifference', () => {
    const pairs: [unknown, unknown][] = [
      [{ a: 1, b: [1, { c: 2 }] }, { b: [1, { c: 2 }], a: 1 }],
      [{ a: 1 }, { a: 1, b: 2 }],
      [{ a: 1, b: 2 }, { a: 1 }],
      [[1, 2], [1, 2, 3]],
      [{ a: null }, {}],
      [{}, JSON.parse('{"__proto__": 1}')],
      ['1', 1],
    ];
    for (const [a, b] of pairs) expect(jsonEqual(a as never, b as never)).toBe(jsonDifference(a as never, b as never) === undefined);
  });
});
