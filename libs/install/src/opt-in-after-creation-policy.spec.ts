import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { OPT_IN_AFTER_CREATION_POLICY_FILE, optInAfterCreationBinding, optInAfterCreationPolicy, optInAfterCreationPolicyYaml } from './opt-in-after-creation-policy.js';

describe('the opt-in-after-creation policy', () => {
  it(`${OPT_IN_AFTER_CREATION_POLICY_FILE} is generated from it (npm run generate:exec-guard)`, () => {
    expect(readFileSync(new URL(`../../../${OPT_IN_AFTER_CREATION_POLICY_FILE}`, import.meta.url), 'utf8')).toBe(optInAfterCreationPolicyYaml());
  });

  it('warns only, never refuses, and fails open', () => {
    expect(optInAfterCreationBinding().spec.validationActions).toEqual(['Warn']);
    expect(optInAfterCreationPolicy().spec.failurePolicy).toBe('Ignore');
  });
});
