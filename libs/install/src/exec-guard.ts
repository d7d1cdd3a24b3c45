import { MANAGED_BY_LABEL, MANAGED_BY_VALUE, type RbacBindingKind, REVOKED_ANNOTATION } from '@outrigger/agent-profiles';
import YAML from 'yaml';
import { baseLabels } from './install-files.js';
import { INSTALL_NAMES } from './install-names.js';

export const EXEC_GUARD_NAME = INSTALL_NAMES.execGuard;
/** The user extra in which the API server names the pod a ServiceAccount token is bound to. */
export const POD_NAME_EXTRA = 'authentication.kubernetes.io/pod-name';
/** Generated from this module by `npm run generate:exec-guard`; a unit test fails until it is. */
export const EXEC_GUARD_FILE = 'deploy/base/rbac-syncer/exec-guard.yaml';
/** A guard for each kind of binding a profile may ask for: each takes the syncer's bindings of that kind as parameters. */
export const EXEC_GUARD_KINDS: readonly RbacBindingKind[] = ['ClusterRoleBinding', 'RoleBinding'];

/** The guard of the agents bound by `kind`: `base` (EXEC_GUARD_NAME) for ClusterRoleBindings, `<base>-namespaced` for RoleBindings. */
export function execGuardName(kind: RbacBindingKind, base: string = EXEC_GUARD_NAME): string {
  return kind === 'ClusterRoleBinding' ? base : `${base}-namespaced`;
}

/**
 * The exec guard's ValidatingAdmissionPolicy for the agents bound by `kind`: a ServiceAccount that
 * Outrigger binds (a profile's binding, managed by the rbac-syncer) may exec, attach and
 * port-forward only into pods of its own namespace, and there only into the pod its token was
 * issued to (the API server names that pod in the caller's `authentication.kubernetes.io/pod-name`
 * extra): an agent is a sidecar and acts on its own pod. Its parameters are the syncer's own
 * bindings of that kind (RoleBindings: those of the request's namespace), so it knows exactly who is
 * bound, and nobody else's requests are judged.
 */
export function execGuardPolicy(kind: RbacBindingKind = 'ClusterRoleBinding', name = execGuardName(kind)) {
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicy',
    // Labelled as deploy/base/rbac-syncer labels it, so `outrigger restore` of this file alone gives the same object.
    metadata: { name, labels: baseLabels('rbac-syncer') },
    spec: {
      failurePolicy: 'Fail',
      paramKind: { apiVersion: 'rbac.authorization.k8s.io/v1', kind },
      matchConstraints: {
        resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CONNECT'], resources: ['pods/exec', 'pods/attach', 'pods/portforward'] }],
      },
      // Only ServiceAccounts can be bound by Outrigger; people and nodes are never judged.
      matchConditions: [{ name: 'service-accounts-only', expression: "request.userInfo.username.startsWith('system:serviceaccount:')" }],
      // The caller is system:serviceaccount:<namespace>:<name>.
      variables: [
        { name: 'callerNamespace', expression: "request.userInfo.username.split(':')[2]" },
        { name: 'callerName', expression: "request.userInfo.username.split(':')[3]" },
        {
          name: 'boundByOutrigger',
          expression: "has(params.subjects) && params.subjects.exists(s, s.kind == 'ServiceAccount' && s.namespace == variables.callerNamespace && s.name == variables.callerName)",
        },
        // Removed a moment ago: a request the API server authorized before the removal is judged as before it.
        {
          name: 'revokedByOutrigger',
          expression: `has(params.metadata.annotations) && '${REVOKED_ANNOTATION}' in params.metadata.annotations && params.metadata.annotations['${REVOKED_ANNOTATION}'].split(' ').exists(x, x == variables.callerNamespace + '/' + variables.callerName)`,
        },
        // Set by the API server for a token bound to a pod (a pod's projected token); empty for any other token.
        {
          name: 'callerPod',
          expression: `has(request.userInfo.extra) && '${POD_NAME_EXTRA}' in request.userInfo.extra && size(request.userInfo.extra['${POD_NAME_EXTRA}']) == 1 ? request.userInfo.extra['${POD_NAME_EXTRA}'][0] : ''`,
        },
      ],
      validations: [
        {
          expression: '!(variables.boundByOutrigger || variables.revokedByOutrigger) || request.namespace == variables.callerNamespace',
          reason: 'Forbidden',
          messageExpression: `'outrigger exec guard: ' + request.userInfo.username + (variables.boundByOutrigger ? ' holds' : ' held until a moment ago') + ' an agent role through ${kind} ' + params.metadata.name + ', which reaches only pods of its own namespace ' + variables.callerNamespace + '; ' + request.subResource + ' into ' + request.namespace + '/' + request.name + ' is refused'`,
        },
        // After the namespace rule, so that a request into another namespace is refused for that.
        {
          expression: "!(variables.boundByOutrigger || variables.revokedByOutrigger) || (variables.callerPod != '' && variables.callerPod == request.name)",
          reason: 'Forbidden',
          messageExpression: `'outrigger exec guard: ' + request.userInfo.username + (variables.boundByOutrigger ? ' holds' : ' held until a moment ago') + ' an agent role through ${kind} ' + params.metadata.name + ', which reaches only the pod its token was issued to (' + (variables.callerPod == '' ? 'this token was issued to no pod' : variables.callerNamespace + '/' + variables.callerPod) + '); ' + request.subResource + ' into ' + request.namespace + '/' + request.name + ' is refused'`,
        },
      ],
    },
  };
}

/** Binds the policy to each of the syncer's bindings of its kind as parameters, denying. */
export function execGuardBinding(kind: RbacBindingKind = 'ClusterRoleBinding', name = execGuardName(kind)) {
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicyBinding',
    metadata: { name, labels: baseLabels('rbac-syncer') },
    spec: {
      policyName: name,
      validationActions: ['Deny'],
      paramRef: {
        // RoleBindings, a namespaced kind: those of the namespace of the pod the request goes to.
        selector: { matchLabels: { [MANAGED_BY_LABEL]: MANAGED_BY_VALUE } },
        // No binding of ours exists: nobody is bound, nothing to judge.
        parameterNotFoundAction: 'Allow',
      },
    },
  };
}

/** The parts of a guard policy that decide what it refuses, parsed from a stored or shipped spec. */
export interface GuardRules {
  /** Who and what it judges: match constraints and match conditions, in canonical JSON. */
  readonly match: string;
  /** Its variables, name → CEL. */
  readonly variables: Readonly<Record<string, string>>;
  /** Its validations' CEL, each of which must hold. */
  readonly validations: readonly string[];
}

export function guardRules(spec: unknown): GuardRules {
  const s = (spec ?? {}) as Record<string, unknown>;
  const list = (v: unknown): Record<string, unknown>[] => (Array.isArray(v) ? (v as Record<string, unknown>[]) : []);
  const pick = (o: Record<string, unknown>, keys: readonly string[]) => Object.fromEntries(keys.map((k) => [k, o[k] ?? null]));
  const constraints = (s['matchConstraints'] ?? {}) as Record<string, unknown>;
  // The API server stores an absent selector as {} (everything): both mean the same.
  const selector = (v: unknown) => (v && typeof v === 'object' && Object.keys(v).length > 0 ? v : {});
  // Likewise an absent scope ('*': any), resourceNames (any name) and matchPolicy.
  const rule = (r: Record<string, unknown>) => ({ ...pick(r, ['apiGroups', 'apiVersions', 'operations', 'resources']), scope: r['scope'] ?? '*', resourceNames: list(r['resourceNames']) });
  return {
    match: JSON.stringify({
      matchPolicy: constraints['matchPolicy'] ?? 'Equivalent',
      namespaceSelector: selector(constraints['namespaceSelector']),
      objectSelector: selector(constraints['objectSelector']),
      excludeResourceRules: list(constraints['excludeResourceRules']),
      resourceRules: list(constraints['resourceRules']).map(rule),
      matchConditions: list(s['matchConditions']).map((c) => pick(c, ['name', 'expression'])),
    }),
    variables: Object.fromEntries(list(s['variables']).map((v) => [String(v['name']), String(v['expression'])])),
    validations: list(s['validations']).map((v) => String(v['expression'])),
  };
}

/**
 * How a stored guard refuses less than the shipped one, or undefined when it refuses at least
 * all the shipped one does: it judges the same requests, and holds every shipped variable and
 * validation as shipped. Validations beyond those (a later version's guard) only refuse more, so
 * an upgrade that tightens the guard does not look like tampering to a syncer not yet upgraded.
 */
export function guardShortfall(stored: GuardRules, shipped: GuardRules): string | undefined {
  if (stored.match !== shipped.match) return 'its match rules or conditions differ from the shipped guard';
  const variable = Object.keys(shipped.variables).find((name) => stored.variables[name] !== shipped.variables[name]);
  if (variable !== undefined) return `its variable ${variable} differs from the shipped guard's or is missing`;
  const missing = shipped.validations.filter((v) => !stored.validations.includes(v));
  if (missing.length > 0) return `it lacks ${missing.length} of the shipped guard's validations (rewritten or removed)`;
  return undefined;
}

/** deploy/base/rbac-syncer/exec-guard.yaml. */
export function execGuardYaml(): string {
  return generatedYaml(
    'libs/install/src/exec-guard.ts',
    [
      'The exec guard: a ServiceAccount that Outrigger binds (a profile\'s ClusterRoleBinding or RoleBinding,',
      'managed by the rbac-syncer) may exec, attach and port-forward only into the pod its token was',
      'issued to, in its own namespace. One policy for each kind of binding, taking the syncer\'s bindings',
      'of that kind as parameters. The rbac-syncer removes a profile\'s bindings while its kind\'s policy',
      'or binding is missing or differs from this file in its rules or CEL',
      '(libs/install/src/exec-guard-state.ts; `outrigger check` judges it the same way).',
    ],
    EXEC_GUARD_KINDS.flatMap((kind) => [execGuardPolicy(kind), execGuardBinding(kind)]),
  );
}

/** A file of deploy/ written from this library: a header that says so and why, then the objects. */
export function generatedYaml(source: string, why: readonly string[], objects: readonly object[]): string {
  const header = [`Generated from ${source} by \`npm run generate:exec-guard\`: edit that instead.`, ...why];
  const docs = objects.map((o) => new YAML.Document(o).toString({ lineWidth: 100 }));
  return `${header.map((l) => `# ${l}`).join('\n')}\n${docs.join('---\n')}`;
}
