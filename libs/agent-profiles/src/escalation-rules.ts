import type { z } from 'zod';
import { celRule, celString, type CelRule } from './crd-meta.js';

/**
 * RBAC grants that are privilege escalation in practice, although they use none of the verbs
 * Kubernetes itself calls escalation. Source: Kubernetes "Role Based Access Control Good
 * Practices", section "Privilege escalation risks"
 * (https://kubernetes.io/docs/concepts/security/rbac-good-practices/#privilege-escalation-risks),
 * plus a few grants of the same kind that page does not name (each reason says which).
 *
 * A profile's rules are checked against this one table; a rule that matches an entry loads only
 * when the profile names the entry in `rbac.dangerouslyAllowEscalation`.
 */

/** The profile field that accepts entries of the table by name. */
export const ESCALATION_OPT_OUT_FIELD = 'dangerouslyAllowEscalation';

const PRACTICES = 'Kubernetes RBAC good practices';

/** One kind of escalation: the resources per API group ("" is the core group) and the verbs. */
export interface EscalationRule {
  /** Stable name: what `rbac.dangerouslyAllowEscalation` lists to accept this entry. */
  readonly name: string;
  readonly resources: Readonly<Record<string, readonly string[]>>;
  /** The verbs that make it escalation; `'any'` means every verb. */
  readonly verbs: readonly string[] | 'any';
  /** One line: why this is escalation, and where that is written. */
  readonly reason: string;
}

export const ESCALATION_RULES = [
  {
    name: 'secrets-read',
    resources: { '': ['secrets'] },
    verbs: ['get', 'list', 'watch'],
    reason: `reading Secrets reveals their credentials, ServiceAccount tokens included, and list and watch return every Secret's contents too (${PRACTICES}: "Listing secrets")`,
  },
  {
    name: 'token-request',
    resources: { '': ['serviceaccounts/token'] },
    verbs: ['create'],
    reason: `a TokenRequest issues a token for any ServiceAccount in reach, so the agent acts with that account's rights (${PRACTICES}: "Token request")`,
  },
  {
    name: 'workload-creation',
    resources: {
      '': ['pods', 'pods/ephemeralcontainers', 'replicationcontrollers'],
      apps: ['deployments', 'replicasets', 'statefulsets', 'daemonsets'],
      batch: ['jobs', 'cronjobs'],
    },
    verbs: ['create', 'update', 'patch'],
    reason: `a pod it creates or changes (new pod, pod template, image, ephemeral container) runs any code as any ServiceAccount of its namespace and mounts any Secret there; with a ClusterRoleBinding that is every namespace, kube-system included (${PRACTICES}: "Workload creation")`,
  },
  {
    name: 'persistent-volume-creation',
    resources: { '': ['persistentvolumes'] },
    verbs: ['create'],
    reason: `a PersistentVolume can be a hostPath, giving the pods that claim it the node's filesystem (${PRACTICES}: "Persistent volume creation")`,
  },
  {
    name: 'node-proxy',
    resources: { '': ['nodes/proxy'] },
    verbs: 'any',
    reason: `nodes/proxy is the kubelet API: commands in every pod of the node, past admission and audit, and even get is not read-only (${PRACTICES}: "Access to proxy subresource of Nodes")`,
  },
  {
    name: 'node-modification',
    resources: { '': ['nodes', 'nodes/status'] },
    verbs: ['update', 'patch'],
    reason: 'node labels and taints steer which pods run on which node, and node addresses steer where the API server sends exec, attach and log traffic (not on the good-practices page; NodeRestriction keeps even kubelets from setting such labels)',
  },
  {
    name: 'namespace-modification',
    resources: { '': ['namespaces'] },
    verbs: ['update', 'patch'],
    reason: `namespace labels choose the Pod Security level and what NetworkPolicies select, and the outrigger.dev/injection label opts a namespace into Outrigger (${PRACTICES}: "Namespace modification")`,
  },
  {
    name: 'csr-approval',
    resources: { 'certificates.k8s.io': ['certificatesigningrequests/approval'] },
    verbs: ['update', 'patch'],
    reason: `approving CertificateSigningRequests issues client certificates with any name, system components' included (${PRACTICES}: "CSRs and certificate issuing")`,
  },
  {
    name: 'certificate-signing',
    resources: { 'certificates.k8s.io': ['signers'] },
    verbs: ['approve', 'sign'],
    reason: `approve and sign on a signer (kubernetes.io/kube-apiserver-client among them) let CSR approval and signing take effect for it (${PRACTICES}: "CSRs and certificate issuing")`,
  },
  {
    name: 'admission-control',
    resources: {
      'admissionregistration.k8s.io': [
        'mutatingwebhookconfigurations',
        'validatingwebhookconfigurations',
        'validatingadmissionpolicies',
        'validatingadmissionpolicybindings',
        'mutatingadmissionpolicies',
        'mutatingadmissionpolicybindings',
      ],
    },
    verbs: ['create', 'update', 'patch', 'delete', 'deletecollection'],
    reason: `admission webhooks read, and mutating ones change, every object admitted to the cluster, and policies (Outrigger's exec guard among them) can be weakened or removed (${PRACTICES}: "Control admission webhooks")`,
  },
  {
    name: 'rbac-modification',
    resources: { 'rbac.authorization.k8s.io': ['clusterroles', 'roles', 'clusterrolebindings', 'rolebindings'] },
    verbs: ['create', 'update', 'patch'],
    reason: `the agent could hand its rights to any subject (system:authenticated included), outside the opted-in ServiceAccounts Outrigger binds (${PRACTICES}, and the RBAC docs: "Restrictions on role binding creation or update")`,
  },
  {
    name: 'api-service-registration',
    resources: { 'apiregistration.k8s.io': ['apiservices'] },
    verbs: ['create', 'update', 'patch'],
    reason: "an APIService sends an API group's requests, with each caller's identity, to a Service of the agent's choosing (not on the good-practices page; the same risk as controlling admission webhooks)",
  },
] as const satisfies readonly EscalationRule[];

export type EscalationName = (typeof ESCALATION_RULES)[number]['name'];

/** The table without its literal types, to read it. */
const TABLE: readonly (EscalationRule & { readonly name: EscalationName })[] = ESCALATION_RULES;

export const ESCALATION_NAMES = ESCALATION_RULES.map((entry) => entry.name) as [EscalationName, ...EscalationName[]];

/** The parts of an rbac/v1 PolicyRule the check reads. */
export interface RuleGrant {
  readonly apiGroups: readonly string[];
  readonly resources: readonly string[];
  readonly verbs: readonly string[];
}

/** Where one rule of a profile meets one entry of the table: the combinations, as the rule spells them. */
export interface EscalationMatch {
  readonly entry: EscalationRule & { readonly name: EscalationName };
  readonly ruleIndex: number;
  /** Index in the rule's verbs of the first verb that matched (where the problem is reported). */
  readonly verbIndex: number;
  readonly verbs: readonly string[];
  readonly resources: readonly { readonly apiGroup: string; readonly resource: string }[];
}

/**
 * Every (rule, entry) pair where some combination of the rule's API groups, resources and verbs is
 * in the entry. Kubernetes compares these names exactly (and they are lowercase); here they are
 * compared case-insensitively, so that a case variant never slips past the table even where some
 * authorizer were to fold case (the rule schema refuses such spellings anyway).
 */
export function findEscalations(rules: readonly RuleGrant[]): EscalationMatch[] {
  const matches: EscalationMatch[] = [];
  rules.forEach((rule, ruleIndex) => {
    for (const entry of TABLE) {
      const resources = rule.apiGroups.flatMap((apiGroup) => {
        const listed = entry.resources[fold(apiGroup)] ?? [];
        return rule.resources.filter((resource) => listed.includes(fold(resource))).map((resource) => ({ apiGroup, resource }));
      });
      const verbIndexes = rule.verbs.flatMap((verb, index) => (entry.verbs === 'any' || entry.verbs.includes(fold(verb)) ? [index] : []));
      const [verbIndex] = verbIndexes;
      if (resources.length === 0 || verbIndex === undefined) continue;
      matches.push({ entry, ruleIndex, verbIndex, verbs: verbIndexes.map((index) => rule.verbs[index] ?? ''), resources });
    }
  });
  return matches;
}

/** `"get", "list" on "secrets" (core group "")`: the combinations of a match, for messages. */
export function describeMatch(match: EscalationMatch): string {
  const resources = match.resources.map(({ apiGroup, resource }) => `${quote(resource)} (${apiGroup === '' ? 'core group ""' : `group ${quote(apiGroup)}`})`);
  return `${match.verbs.map(quote).join(', ')} on ${resources.join(', ')}`;
}

function fold(name: string): string {
  return name.toLowerCase();
}

function quote(value: string): string {
  return JSON.stringify(value);
}

/**
 * The zod check behind `rbac`: refuses each (rule, entry) match the profile does not accept by
 * name, and each accepted name that no rule needs (so an opt-out cannot silently cover a rule
 * added later).
 */
export function refuseEscalations(
  rbac: { readonly rules: readonly RuleGrant[]; readonly [ESCALATION_OPT_OUT_FIELD]?: readonly string[] | undefined },
  ctx: z.RefinementCtx,
): void {
  const accepted = rbac[ESCALATION_OPT_OUT_FIELD] ?? [];
  const matches = findEscalations(rbac.rules);
  for (const match of matches) {
    if (accepted.includes(match.entry.name)) continue;
    ctx.addIssue({
      code: 'custom',
      path: ['rules', match.ruleIndex, 'verbs', match.verbIndex],
      message:
        `${describeMatch(match)} is escalation in practice (${match.entry.name}): ${match.entry.reason}; ` +
        `if the agent truly needs it, accept it by name with rbac.${ESCALATION_OPT_OUT_FIELD}: [${match.entry.name}]`,
    });
  }
  accepted.forEach((name, index) => {
    if (!matches.some((match) => match.entry.name === name)) {
      ctx.addIssue({
        code: 'custom',
        path: [ESCALATION_OPT_OUT_FIELD, index],
        message: `${quote(name)} is accepted but no rule needs it: remove it, so that it cannot cover a rule added later`,
      });
    }
  });
}

/**
 * What a loaded profile's `rbac.dangerouslyAllowEscalation` lets through, one human-readable line
 * per accepted match, for the services to log as warnings at startup. Empty for a profile
 * without opt-outs (every other match was refused when the profile loaded).
 */
export function escalationOptOuts(profile: {
  readonly name: string;
  readonly rbac?: { readonly binding: { readonly kind: string }; readonly rules: readonly RuleGrant[]; readonly [ESCALATION_OPT_OUT_FIELD]?: readonly string[] | undefined } | undefined;
}): string[] {
  const accepted: readonly string[] = profile.rbac?.[ESCALATION_OPT_OUT_FIELD] ?? [];
  if (!profile.rbac || accepted.length === 0) return [];
  const scope = profile.rbac.binding.kind === 'ClusterRoleBinding' ? 'in every namespace (ClusterRoleBinding)' : 'in its own namespace (RoleBinding)';
  return findEscalations(profile.rbac.rules)
    .filter((match) => accepted.includes(match.entry.name))
    .map(
      (match) =>
        `profile ${profile.name}: rbac.${ESCALATION_OPT_OUT_FIELD} accepts ${match.entry.name} for rbac.rules[${match.ruleIndex}] ` +
        `(${describeMatch(match)}), granted to every opted-in ServiceAccount ${scope}: ${match.entry.reason}`,
    );
}

/**
 * The table as CEL rules on `rbac` for the CRD, one per entry: no rule may match the entry unless
 * `dangerouslyAllowEscalation` names it. (Whether every accepted name is needed is left to the
 * services.)
 */
export function escalationCelRules(): CelRule[] {
  return TABLE.map((entry) => {
    const groups = Object.entries(entry.resources).map(([group, resources]) => {
      const list = `[${resources.map(celString).join(', ')}]`;
      return `(${celString(group)} in r.apiGroups && r.resources.exists(x, x in ${list}))`;
    });
    const verbs = entry.verbs === 'any' ? 'true' : `r.verbs.exists(v, v in [${entry.verbs.map(celString).join(', ')}])`;
    const accepted = `(has(self.${ESCALATION_OPT_OUT_FIELD}) && ${celString(entry.name)} in self.${ESCALATION_OPT_OUT_FIELD})`;
    return celRule(
      `${accepted} || !self.rules.exists(r, (${groups.join(' || ')}) && ${verbs})`,
      `a rule is escalation in practice (${entry.name}): ${entry.reason}; if the agent truly needs it, accept it by name with rbac.${ESCALATION_OPT_OUT_FIELD}: [${entry.name}]`,
      '.rules',
    );
  });
}
