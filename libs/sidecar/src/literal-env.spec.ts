import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { forbiddenCharacter, literalEnvValue } from './literal-env.js';

/**
 * Kubernetes' env expansion (k8s.io/kubernetes third_party/forked/golang/expansion, Expand):
 * `$$` becomes `$`, `$(NAME)` becomes NAME's value, any other `$` stays as it is.
 */
function kubernetesExpand(input: string, mapping: (name: string) => string): string {
  let out = '';
  let checkpoint = 0;
  for (let cursor = 0; cursor < input.length; cursor++) {
    if (input[cursor] !== '$' || cursor + 1 >= input.length) continue;
    out += input.slice(checkpoint, cursor);
    const rest = input.slice(cursor + 1);
    let read: string;
    let advance = 1;
    if (rest[0] === '$') read = '$';
    else if (rest[0] === '(') {
      const close = rest.indexOf(')');
      if (close > 0) {
        read = mapping(rest.slice(1, close));
        advance = close + 1;
      } else read = '$(';
    } else read = `$${rest[0]}`;
    out += read;
    cursor += advance;
    checkpoint = cursor + 1;
  }
  return out + input.slice(checkpoint);
}

// Every variable is defined, as a profile's Secret-backed env would be: the worst case.
const everything = (name: string) => `<secret ${name}>`;

describe('literalEnvValue', () => {
  it('the expansion rules this test relies on, on known cases', () => {
    expect(kubernetesExpand('nightly-$(XXL_JOB_ADDR)', everything)).toBe('nightly-<secret XXL_JOB_ADDR>');
    expect(kubernetesExpand('a$$b$c$(d', everything)).toBe('a$b$c$(d');
  });

  it('keeps the $(VAR) attack out: the agent sees the annotation text, not another variable', () => {
    expect(kubernetesExpand(literalEnvValue('nightly-$(XXL_JOB_ADDR)'), everything)).toBe('nightly-$(XXL_JOB_ADDR)');
    expect(kubernetesExpand(literalEnvValue('$$(X)$'), everything)).toBe('$$(X)$');
  });

  it('for any string, expansion of the escaped value gives back the string', () => {
    const dollarHeavy = fc.string({ unit: fc.constantFrom('$', '(', ')', 'A', 'b', '_', '-', ' ') });
    fc.assert(fc.property(fc.oneof(dollarHeavy, fc.string()), (s) => kubernetesExpand(literalEnvValue(s), everything) === s));
  });

  it('leaves values without $ untouched', () => {
    fc.assert(fc.property(fc.string().filter((s) => !s.includes('$')), (s) => literalEnvValue(s) === s));
  });
});

describe('forbiddenCharacter', () => {
  it('names NUL, newlines, other C0 and C1 controls, DEL and bidi overrides', () => {
    expect(forbiddenCharacter('a\u0000b')).toBe('U+0000');
    expect(forbiddenCharacter('line\nforged')).toBe('U+000A');
    expect(forbiddenCharacter('tab\there')).toBe('U+0009');
    expect(forbiddenCharacter('del\u007f')).toBe('U+007F');
    expect(forbiddenCharacter('c1\u0085')).toBe('U+0085');
    expect(forbiddenCharacter('evil\u202egnp.exe')).toBe('U+202E');
    expect(forbiddenCharacter('\u2066isolate')).toBe('U+2066');
    expect(forbiddenCharacter('line\u2028forged')).toBe('U+2028');
    expect(forbiddenCharacter('paragraph\u2029forged')).toBe('U+2029');
  });

  it('accepts ordinary text, including non-Latin letters and emoji', () => {
    for (const ok of ['http://xxl-job-admin.jobs:8080/xxl-job-admin', 'nightly report 2026', 'Überweisung', '夜間バッチ', '🚀 launch']) {
      expect(forbiddenCharacter(ok)).toBeUndefined();
    }
  });
});
