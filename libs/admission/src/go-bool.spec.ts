import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseGoBool } from './go-bool.js';

describe('parseGoBool (Go strconv.ParseBool)', () => {
  it.each(['1', 't', 'T', 'TRUE', 'true', 'True'])('reads %s as true', (value) => {
    expect(parseGoBool(value)).toBe(true);
  });

  it.each(['0', 'f', 'F', 'FALSE', 'false', 'False'])('reads %s as false', (value) => {
    expect(parseGoBool(value)).toBe(false);
  });

  it.each(['', 'yes', 'no', 'on', 'tRUE', 'TRue', ' true', 'true ', '2', 'y'])('rejects %j', (value) => {
    expect(parseGoBool(value)).toBeUndefined();
  });

  it('accepts exactly twelve spellings', () => {
    const accepted = new Set(['1', 't', 'T', 'TRUE', 'true', 'True', '0', 'f', 'F', 'FALSE', 'false', 'False']);
    fc.assert(fc.property(fc.string({ maxLength: 6 }), (value) => (parseGoBool(value) !== undefined) === accepted.has(value)));
  });
});
