import { describe, expect, it } from 'vitest';
import { referenceProfile } from '@outrigger/agent-profiles';
import { parameterEnv } from './parameter-values.js';

const XXL_JOB_PROFILE = referenceProfile();

function annotations(values: Record<string, string>) {
  return { values: new Map(Object.entries(values)), nonString: new Set<string>() };
}

const valid = {
  'xxl-agent/job-addr': 'http://xxl-job-admin.jobs:8080/xxl-job-admin',
  'xxl-agent/target-container': 'app',
  'xxl-agent/job-name': 'nightly',
};

describe('parameterEnv', () => {
  it('writes values so that Kubernetes expansion gives the agent the annotation text', () => {
    const result = parameterEnv(XXL_JOB_PROFILE, annotations({ ...valid, 'xxl-agent/job-name': 'nightly-$(XXL_JOB_ADDR)' }), ['app']);
    expect(result).toMatchObject({ type: 'values' });
    if (result.type !== 'values') return;
    expect(result.env.find((e) => e.name === 'XXL_JOB_NAME')?.value).toBe('nightly-$$(XXL_JOB_ADDR)');
  });

  it.each([
    ['a NUL', 'night\u0000ly', 'U+0000'],
    ['a newline', 'nightly\nlevel=error msg=forged', 'U+000A'],
    ['a right-to-left override', 'nightly\u202e', 'U+202E'],
  ])('refuses %s, naming the annotation and the character but not echoing the value', (_what, value, code) => {
    const result = parameterEnv(XXL_JOB_PROFILE, annotations({ ...valid, 'xxl-agent/job-name': value }), ['app']);
    expect(result).toMatchObject({ type: 'denied', code: 422 });
    const message = JSON.stringify(result);
    expect(message).toContain('annotation xxl-agent/job-name');
    expect(message).toContain(code);
    expect(message).not.toContain(JSON.stringify(value).slice(1, -1));
  });

  // An admin's careless pattern must not become a tenant's lever: this one backtracks exponentially.
  it('refuses a value built against a backtracking pattern, promptly and naming the annotation', () => {
    const profile = { ...XXL_JOB_PROFILE, parameters: XXL_JOB_PROFILE.parameters.map((p) => (p.annotation === 'job-name' ? { ...p, pattern: '(a+)+' } : p)) };
    const result = parameterEnv(profile, annotations({ ...valid, 'xxl-agent/job-name': 'a'.repeat(4_000) + '!' }), ['app']);
    expect(result).toMatchObject({ type: 'denied', code: 422 });
    expect(JSON.stringify(result)).toContain('annotation xxl-agent/job-name');
    expect(JSON.stringify(result)).toContain('does not match the pattern ^(?:(a+)+)$');
  });
});
