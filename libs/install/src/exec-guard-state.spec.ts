import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { execGuardProblem, projectGuardBinding, projectGuardPolicy } from './exec-guard-state.js';

// The guard exactly as deploy/ ships it.
const SHIPPED = parseAllDocuments(readFileSync(fileURLToPath(new URL('../../../deploy/base/rbac-syncer/exec-guard.yaml', import.meta.url)), 'utf8')).map(
  (d) => d.toJS() as { kind: string; metadata?: { name?: string }; spec: Record<string, unknown> },
);
const shipped = (kind: string, name: string) => {
  const found = SHIPPED.find((o) => o.kind === kind && o.metadata?.name === name);
  if (!found) throw new Error(`exec-guard.yaml has no ${kind} ${name}`);
  return found;
};
const KIND = 'ClusterRoleBinding';
const NAME = 'outrigger-agent-exec-guard';
const policy = shipped('ValidatingAdmissionPolicy', NAME);
const binding = shipped('ValidatingAdmissionPolicyBinding', NAME);

const withSpec = (o: typeof policy, spec: Record<string, unknown>) => ({ ...o, spec: { ...o.spec, ...spec } });

describe('execGuardProblem', () => {
  it('the guard as shipped is in force', () => {
    expect(execGuardProblem(KIND, NAME, projectGuardPolicy(policy), projectGuardBinding(binding))).toBeUndefined();
  });

  it("the RoleBindings' guard as shipped is in force for RoleBinding profiles, and neither guard stands in for the other", () => {
    const namespaced = `${NAME}-namespaced`;
    const [p, b] = [projectGuardPolicy(shipped('ValidatingAdmissionPolicy', namespaced)), projectGuardBinding(shipped('ValidatingAdmissionPolicyBinding', namespaced))];
    expect(execGuardProblem('RoleBinding', namespaced, p, b)).toBeUndefined();
    expect(execGuardProblem('RoleBinding', namespaced, projectGuardPolicy(policy), b)).toMatch(/takes rbac.authorization.k8s.io\/v1\/ClusterRoleBinding as parameters, not RoleBindings/);
    expect(execGuardProblem(KIND, NAME, p, projectGuardBinding(binding))).toMatch(/takes rbac.authorization.k8s.io\/v1\/RoleBinding as parameters, not ClusterRoleBindings/);
  });

  it('names each missing object and a fix that creates only what is missing', () => {
    expect(execGuardProblem(KIND, NAME, undefined, projectGuardBinding(binding))).toBe(
      `exec guard not in force: ValidatingAdmissionPolicy ${NAME} not found; create what is missing, changing nothing else: outrigger restore -f deploy/base/rbac-syncer/exec-guard.yaml (installed with Helm: outrigger check prints Helm's repair)`,
    );
    expect(execGuardProblem(KIND, NAME, projectGuardPolicy(withSpec(policy, { failurePolicy: 'Ignore' })), projectGuardBinding(binding))).toMatch(/; put the shipped guard back: outrigger restore --replace -f deploy\/base\/rbac-syncer\/exec-guard\.yaml \(installed with Helm: outrigger check prints Helm's repair\)$/);
    expect(execGuardProblem(KIND, NAME, undefined, undefined)).toMatch(/ValidatingAdmissionPolicy \S+ not found; ValidatingAdmissionPolicyBinding \S+ not found/);
  });

  it('a policy that fails open or judges other parameters is not the guard', () => {
    expect(execGuardProblem(KIND, NAME, projectGuardPolicy(withSpec(policy, { failurePolicy: 'Ignore' })), projectGuardBinding(binding))).toMatch(/failurePolicy Ignore, not Fail/);
    expect(execGuardProblem(KIND, NAME, projectGuardPolicy(withSpec(policy, { paramKind: { apiVersion: 'v1', kind: 'ConfigMap' } })), projectGuardBinding(binding))).toMatch(
      /takes v1\/ConfigMap as parameters/,
    );
  });

  it('a binding that only warns, binds another policy or selects other bindings is not the guard', () => {
    const p = projectGuardPolicy(policy);
    expect(execGuardProblem(KIND, NAME, p, projectGuardBinding(withSpec(binding, { validationActions: ['Warn', 'Audit'] })))).toMatch(/does not have the Deny action/);
    expect(execGuardProblem(KIND, NAME, p, projectGuardBinding(withSpec(binding, { policyName: 'other' })))).toMatch(/binds policy "other"/);
    const narrower = { selector: { matchLabels: { 'app.kubernetes.io/managed-by': 'outrigger-rbac-syncer', 'outrigger.dev/profile': 'none' } }, parameterNotFoundAction: 'Allow' };
    expect(execGuardProblem(KIND, NAME, p, projectGuardBinding(withSpec(binding, { paramRef: narrower })))).toMatch(/does not select exactly the ClusterRoleBindings/);
    // A RoleBindings' guard that looks in one fixed namespace judges nobody bound in any other.
    const namespaced = `${NAME}-namespaced`;
    const [rbPolicy, rbBinding] = [projectGuardPolicy(shipped('ValidatingAdmissionPolicy', namespaced)), shipped('ValidatingAdmissionPolicyBinding', namespaced)];
    const paramRef = (rbBinding.spec as { paramRef: Record<string, unknown> }).paramRef;
    expect(execGuardProblem('RoleBinding', namespaced, rbPolicy, projectGuardBinding(withSpec(rbBinding, { paramRef: { ...paramRef, namespace: 'empty' } })))).toMatch(/looks for its parameters only in namespace empty/);
    expect(execGuardProblem(KIND, NAME, p, projectGuardBinding(withSpec(binding, { paramRef: { name: 'one', parameterNotFoundAction: 'Allow' } })))).toMatch(/takes only the parameter named one/);
  });

  it('a policy whose match rules or CEL were rewritten is not the guard, though it exists and fails closed', () => {
    const b = projectGuardBinding(binding);
    const spec = policy.spec as { validations: { expression: string }[]; matchConstraints: Record<string, unknown> };
    const allowAll = withSpec(policy, { validations: [{ ...spec.validations[0], expression: 'true' }] });
    expect(execGuardProblem(KIND, NAME, projectGuardPolicy(allowAll), b)).toMatch(/ValidatingAdmissionPolicy \S+ refuses less than the shipped guard: it lacks 2 of the shipped guard's validations/);
    const someNamespaces = withSpec(policy, { matchConstraints: { ...spec.matchConstraints, namespaceSelector: { matchLabels: { judged: 'yes' } } } });
    expect(execGuardProblem(KIND, NAME, projectGuardPolicy(someNamespaces), b)).toMatch(/refuses less than the shipped guard: its match rules or conditions differ/);
  });

  it("a later version's guard, which refuses more with a validation of its own, is the guard", () => {
    const spec = policy.spec as { variables: { name: string; expression: string }[]; validations: { expression: string }[] };
    const tighter = withSpec(policy, {
      variables: [...spec.variables, { name: 'later', expression: "request.name != ''" }],
      validations: [...spec.validations, { expression: '!variables.boundByOutrigger || variables.later', reason: 'Forbidden' }],
    });
    expect(execGuardProblem(KIND, NAME, projectGuardPolicy(tighter), projectGuardBinding(binding))).toBeUndefined();
  });

  it('a binding that narrows what it judges is not the guard; the selectors the API server defaults are no narrowing', () => {
    const p = projectGuardPolicy(policy);
    const defaulted = { namespaceSelector: {}, objectSelector: {}, matchPolicy: 'Equivalent' };
    expect(execGuardProblem(KIND, NAME, p, projectGuardBinding(withSpec(binding, { matchResources: defaulted })))).toBeUndefined();
    const narrowed = { ...defaulted, namespaceSelector: { matchLabels: { team: 'a' } } };
    expect(execGuardProblem(KIND, NAME, p, projectGuardBinding(withSpec(binding, { matchResources: narrowed })))).toMatch(/narrows the requests it judges \(matchResources\)/);
  });
});
