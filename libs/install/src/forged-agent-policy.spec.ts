import { readFileSync } from 'node:fs';
import { buildMutatingWebhookConfiguration } from '@outrigger/admission';
import { describe, expect, it } from 'vitest';
import { FORGED_AGENT_POLICY_FILE, forgedAgentBinding, forgedAgentPolicy, forgedAgentPolicyYaml } from './forged-agent-policy.js';
import { INSTALL_NAMES } from './install-names.js';

describe('the forged-agent policy', () => {
  it(`${FORGED_AGENT_POLICY_FILE} is generated from it (npm run generate:exec-guard)`, () => {
    expect(readFileSync(new URL(`../../../${FORGED_AGENT_POLICY_FILE}`, import.meta.url), 'utf8')).toBe(forgedAgentPolicyYaml());
  });

  const webhook = buildMutatingWebhookConfiguration({ name: INSTALL_NAMES.webhook, installNamespace: INSTALL_NAMES.namespace, client: { mode: 'service', name: INSTALL_NAMES.injector } }).webhooks[0];

  it('judges exactly the pods the webhook skips, in exactly the namespaces the webhook serves', () => {
    const marked = webhook?.matchConditions.find((c) => c.name === 'marked-pods')?.expression;
    expect(marked).toBeDefined();
    expect(forgedAgentPolicy().spec.matchConditions).toEqual([{ name: 'not-marked', expression: `!(${marked})` }]);
    expect(forgedAgentBinding().spec.matchResources.namespaceSelector).toEqual(webhook?.namespaceSelector);
    // On the policy too: the API server reports a configuration error (no AgentProfile CRD) before it looks at bindings.
    expect(forgedAgentPolicy().spec.matchConstraints.namespaceSelector).toEqual(webhook?.namespaceSelector);
    const { namespaceSelector: _selector, ...constraints } = forgedAgentPolicy().spec.matchConstraints;
    expect(constraints).toEqual({ resourceRules: webhook?.rules.map(({ scope: _scope, ...rule }) => rule) });
  });
});
