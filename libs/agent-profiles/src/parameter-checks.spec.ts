import { describe, expect, it } from 'vitest';
import { compileParameterPattern, isHttpUrl } from './parameter-checks.js';

describe('isHttpUrl', () => {
  it.each(['http://xxl:8080', 'https://xxl-job.example.com/xxl-job-admin', 'http://10.0.0.1:8080/a?b=c'])('accepts %s', (value) => {
    expect(isHttpUrl(value)).toBe(true);
  });

  it.each(['xxl:8080', 'ftp://x', 'http://', 'mailto:a@b', '', '/relative', 'file:///etc/passwd'])('rejects %j', (value) => {
    expect(isHttpUrl(value)).toBe(false);
  });
});

describe('compileParameterPattern', () => {
  it('anchors the whole value, even with alternation', () => {
    const pattern = compileParameterPattern('a|b');
    expect(pattern.test('a')).toBe(true);
    expect(pattern.test('ab')).toBe(false);
    expect(pattern.test('xb')).toBe(false);
  });

  it('throws on an invalid expression, naming the problem', () => {
    expect(() => compileParameterPattern('(')).toThrow('missing closing ): `(`');
  });

  it('cannot be broken out of its anchoring by the pattern itself', () => {
    expect(() => compileParameterPattern('a)|(.*')).toThrow(/unexpected \)|missing closing/);
  });

  // Only a backtracking engine can offer these; refusing them is what keeps matching linear.
  it.each([
    ['a lookahead', '(?=a)a'],
    ['a backreference', '(a)\\1'],
  ])('refuses %s, which needs backtracking', (_what, pattern) => {
    expect(() => compileParameterPattern(pattern)).toThrow(/invalid or unsupported Perl syntax|invalid escape sequence/);
  });

  // A backtracking engine takes 2^n steps on this value and never answers: the injector would stall.
  it('answers at once on a value built to make a backtracking engine explode', () => {
    const value = 'a'.repeat(4_096) + '!';
    expect(compileParameterPattern('(a+)+').test(value)).toBe(false);
    expect(compileParameterPattern('(a|aa)*').test(value)).toBe(false);
    expect(compileParameterPattern('[0-9a]+[0-9a]+[0-9a]+b').test(value)).toBe(false);
  });

  it('matches code points, so a non-ASCII value is one character to the pattern', () => {
    expect(compileParameterPattern('.').test('é')).toBe(true);
    expect(compileParameterPattern('\\p{Han}{2}').test('任务')).toBe(true);
    expect(compileParameterPattern('.').test('😀')).toBe(true);
  });
});
