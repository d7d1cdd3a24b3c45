import { readFileSync } from 'node:fs';
import { buildMutatingWebhookConfiguration } from '@outrigger/admission';
import { describe, expect, it } from 'vitest';
import { INSTALL_NAMES } from './install-names.js';
import { OPT_IN_MISSING_POLICY_FILE, optInMissingBinding, optInMissingPolicy, optInMissingPolicyYaml } from './opt-in-missing-policy.js';

describe('the opt-in-missing policy', () => {
  it(`${OPT_IN_MISSING_POLICY_FILE} is generated from it (npm run generate:exec-guard)`, () => {
    expect(readFileSync(new URL(`../../../${OPT_IN_MISSING_POLICY_FILE}`, import.meta.url), 'utf8')).toBe(optInMissingPolicyYaml());
  });

  it('warns only, never refuses, and fails open', () => {
    expect(optInMissingBinding().spec.validationActions).toEqual(['Warn']);
    expect(optInMissingPolicy().spec.failurePolicy).toBe('Ignore');
  });

  it('judges exactly the namespaces the webhook serves', () => {
    const webhook = buildMutatingWebhookConfiguration({ name: INSTALL_NAMES.webhook, installNamespace: INSTALL_NAMES.namespace, client: { mode: 'service', name: INSTALL_NAMES.injector } }).webhooks[0];
    expect(optInMissingBinding().spec.matchResources.namespaceSelector).toEqual(webhook?.namespaceSelector);
    expect(optInMissingPolicy().spec.matchConstraints.namespaceSelector).toEqual(webhook?.namespaceSelector);
  });
});
