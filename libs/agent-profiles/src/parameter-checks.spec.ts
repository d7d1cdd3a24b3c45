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

  it('throws on an invalid expression', () => {
    expect(() => compileParameterPattern('(')).toThrow(SyntaxError);
  });
});
