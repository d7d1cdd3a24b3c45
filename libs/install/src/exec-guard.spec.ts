import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { EXEC_GUARD_FILE, EXEC_GUARD_KINDS, execGuardBinding, execGuardName, execGuardPolicy, execGuardYaml, guardRules, guardShortfall } from './exec-guard.js';

describe('the exec guard', () => {
  it(`${EXEC_GUARD_FILE} is generated from it (npm run generate:exec-guard)`, () => {
    expect(readFileSync(new URL(`../../../${EXEC_GUARD_FILE}`, import.meta.url), 'utf8')).toBe(execGuardYaml());
  });

  it('has one policy and binding for each kind of binding, named apart, each taking bindings of its kind as parameters and judging alike', () => {
    expect(EXEC_GUARD_KINDS.map((kind) => execGuardName(kind, 'g'))).toEqual(['g', 'g-namespaced']);
    const [cluster, namespaced] = EXEC_GUARD_KINDS.map((kind) => execGuardPolicy(kind)) as [ReturnType<typeof execGuardPolicy>, ReturnType<typeof execGuardPolicy>];
    expect([cluster.spec.paramKind.kind, namespaced.spec.paramKind.kind]).toEqual(['ClusterRoleBinding', 'RoleBinding']);
    // The same refusals; only the messages name the kind.
    expect(guardRules(namespaced.spec).validations).toEqual(guardRules(cluster.spec).validations);
    expect(guardRules(namespaced.spec).variables).toEqual(guardRules(cluster.spec).variables);
    expect(namespaced.spec.validations.map((v) => v.messageExpression.replaceAll('RoleBinding', 'ClusterRoleBinding'))).toEqual(cluster.spec.validations.map((v) => v.messageExpression));
    for (const kind of EXEC_GUARD_KINDS) expect(execGuardBinding(kind).spec.policyName).toBe(execGuardPolicy(kind).metadata.name);
  });

  const shipped = execGuardPolicy().spec;
  const rules = guardRules(shipped);

  it('compares equal to itself as the API server stores it: absent selectors defaulted to {}, scope and matchPolicy added', () => {
    const stored = {
      ...shipped,
      matchConstraints: { ...shipped.matchConstraints, matchPolicy: 'Equivalent', namespaceSelector: {}, objectSelector: {}, resourceRules: shipped.matchConstraints.resourceRules.map((r) => ({ ...r, scope: '*' })) },
    };
    expect(guardShortfall(guardRules(stored), rules)).toBeUndefined();
  });

  it.each<[string, (spec: typeof shipped) => unknown]>([
    ['a validation rewritten to allow everything', (s) => ({ ...s, validations: [{ ...s.validations[0], expression: 'true' }] })],
    ['a variable that never matches', (s) => ({ ...s, variables: s.variables.map((v) => (v.name === 'boundByOutrigger' ? { ...v, expression: 'false' } : v)) })],
    ['a match condition that judges nobody', (s) => ({ ...s, matchConditions: [{ name: 'service-accounts-only', expression: 'false' }] })],
    ['pods/exec no longer matched', (s) => ({ ...s, matchConstraints: { resourceRules: [{ ...s.matchConstraints.resourceRules[0], resources: ['pods/attach'] }] } })],
    ['namespaces excluded by a selector', (s) => ({ ...s, matchConstraints: { ...s.matchConstraints, namespaceSelector: { matchLabels: { judged: 'yes' } } } })],
    ['resources excluded', (s) => ({ ...s, matchConstraints: { ...s.matchConstraints, excludeResourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CONNECT'], resources: ['pods/exec'] }] } })],
    ['a variable removed', (s) => ({ ...s, variables: s.variables.filter((v) => v.name !== 'callerName') })],
    ['a validation removed, another added in its place', (s) => ({ ...s, validations: [{ expression: 'request.namespace != "kube-system"' }] })],
    ['pods/exec matched only for named pods', (s) => ({ ...s, matchConstraints: { resourceRules: [{ ...s.matchConstraints.resourceRules[0], resourceNames: ['nothing'] }] } })],
    ['pods/exec matched only at cluster scope (no pod is)', (s) => ({ ...s, matchConstraints: { resourceRules: [{ ...s.matchConstraints.resourceRules[0], scope: 'Cluster' }] } })],
    ['an exact matchPolicy', (s) => ({ ...s, matchConstraints: { ...s.matchConstraints, matchPolicy: 'Exact' } })],
    ['a match condition added (it judges fewer requests)', (s) => ({ ...s, matchConditions: [...s.matchConditions, { name: 'only-some', expression: "request.name != 'x'" }] })],
  ])('tells apart %s', (_what, rewrite) => {
    expect(guardShortfall(guardRules(rewrite(shipped)), rules)).toBeDefined();
  });

  // Invariant: a guard passes only if it refuses at least what the shipped one does.
  const cel = fc.stringMatching(/^[a-z][a-z .=!']{0,20}$/);
  it('property: adding variables of new names and validations never makes a shortfall; changing or dropping a shipped one always does', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.stringMatching(/^x[a-z]{0,8}$/), cel)), fc.array(cel), (variables, validations) => {
        const tighter = { ...shipped, variables: [...shipped.variables, ...variables.map(([name, expression]) => ({ name, expression }))], validations: [...validations.map((expression) => ({ expression })), ...shipped.validations] };
        expect(guardShortfall(guardRules(tighter), rules)).toBeUndefined();
      }),
    );
    fc.assert(
      fc.property(fc.nat(), fc.boolean(), cel, (pick, variable, expression) => {
        const list = variable ? shipped.variables : shipped.validations;
        const at = pick % list.length;
        const original = list[at]?.expression ?? '';
        const changed = list.flatMap((item, i) => (i !== at ? [item] : expression === original ? [] : [{ ...item, expression }]));
        const weaker = variable ? { ...shipped, variables: changed } : { ...shipped, validations: changed };
        expect(guardShortfall(guardRules(weaker), rules)).toBeDefined();
      }),
    );
  });

  it('accepts a guard that refuses more: every shipped variable and validation kept, more added', () => {
    const tighter = {
      ...shipped,
      variables: [...shipped.variables, { name: 'callerContainer', expression: "has(request.userInfo.extra) ? 'x' : ''" }],
      validations: [...shipped.validations, { expression: "!variables.boundByOutrigger || variables.callerContainer == 'x'" }],
    };
    expect(guardShortfall(guardRules(tighter), rules)).toBeUndefined();
  });
});
