import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { EXEC_GUARD_FILE, execGuardPolicy, execGuardYaml, guardRules } from './exec-guard.js';

describe('the exec guard', () => {
  it(`${EXEC_GUARD_FILE} is generated from it (npm run generate:exec-guard)`, () => {
    expect(readFileSync(new URL(`../../../${EXEC_GUARD_FILE}`, import.meta.url), 'utf8')).toBe(execGuardYaml());
  });

  const shipped = execGuardPolicy().spec;
  const rules = guardRules(shipped);

  it('compares equal to itself as the API server stores it: absent selectors defaulted to {}, scope and matchPolicy added', () => {
    const stored = {
      ...shipped,
      matchConstraints: { ...shipped.matchConstraints, matchPolicy: 'Equivalent', namespaceSelector: {}, objectSelector: {}, resourceRules: shipped.matchConstraints.resourceRules.map((r) => ({ ...r, scope: '*' })) },
    };
    expect(guardRules(stored)).toBe(rules);
  });

  it.each<[string, (spec: typeof shipped) => unknown]>([
    ['a validation rewritten to allow everything', (s) => ({ ...s, validations: [{ ...s.validations[0], expression: 'true' }] })],
    ['a variable that never matches', (s) => ({ ...s, variables: s.variables.map((v) => (v.name === 'boundByOutrigger' ? { ...v, expression: 'false' } : v)) })],
    ['a match condition that judges nobody', (s) => ({ ...s, matchConditions: [{ name: 'service-accounts-only', expression: 'false' }] })],
    ['pods/exec no longer matched', (s) => ({ ...s, matchConstraints: { resourceRules: [{ ...s.matchConstraints.resourceRules[0], resources: ['pods/attach'] }] } })],
    ['namespaces excluded by a selector', (s) => ({ ...s, matchConstraints: { ...s.matchConstraints, namespaceSelector: { matchLabels: { judged: 'yes' } } } })],
    ['resources excluded', (s) => ({ ...s, matchConstraints: { ...s.matchConstraints, excludeResourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CONNECT'], resources: ['pods/exec'] }] } })],
  ])('tells apart %s', (_what, rewrite) => {
    expect(guardRules(rewrite(shipped))).not.toBe(rules);
  });
});
