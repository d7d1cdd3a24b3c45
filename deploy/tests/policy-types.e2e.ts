import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { DEPLOY_DIR, runBuildScript } from '@outrigger/control-plane';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';

// Kubernetes type-checks a policy's validations and messages only, and none of a policy whose rules
// name a wildcard version or a subresource: a misspelt field in a variable or a match condition
// (`has(object.spec.initContainer)`) is false, not an error, and a policy built on it fails open.
// tools/kube/cmd/policy-typecheck runs Kubernetes' own checker over every expression we ship, on the
// pinned types and on those of the oldest supported Kubernetes.
const BASE = join(DEPLOY_DIR, 'base');
const CRD = join(BASE, 'crd', 'agentprofiles.outrigger.dev.yaml');

interface Report {
  file: string;
  object: string;
  checkedAgainst: string[];
  params?: string;
  expressions: number;
  findings: { field: string; issue: string }[];
}

type Doc = { kind?: string; metadata?: { name?: string }; spec?: Record<string, unknown>; webhooks?: Record<string, unknown>[] };

/** The checker on the pinned Kubernetes' types, and on the oldest supported (tools/kube/floor). */
const checkers = { pinned: '', floor: '' };
let work: string;

beforeAll(async () => {
  const [pinned, floor] = await Promise.all([runBuildScript('tools/kube/build.sh', ['policy-typecheck']), runBuildScript('tools/kube/build.sh', ['floor', 'policy-typecheck'])]);
  checkers.pinned = join(pinned, 'policy-typecheck');
  checkers.floor = join(floor, 'policy-typecheck');
  work = mkdtempSync(join(tmpdir(), 'outrigger-policy-types-'));
}, 900_000);

afterAll(() => rmSync(work, { recursive: true, force: true }));

function typecheck(files: readonly string[], on: keyof typeof checkers = 'pinned'): { code: number; reports: Report[]; stderr: string } {
  const run = spawnSync(checkers[on], files, { encoding: 'utf8' });
  const reports = run.stdout
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Report);
  return { code: run.status ?? -1, reports, stderr: run.stderr };
}

function baseFiles(): string[] {
  return readdirSync(BASE, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.yaml'))
    .map((f) => join(BASE, f))
    .sort();
}

function docs(file: string): Doc[] {
  return parseAllDocuments(readFileSync(file, 'utf8')).map((d) => d.toJS() as Doc);
}

/** The CEL expressions of one policy or webhook, by field, as the checker names them. */
function expressionsOf(doc: Doc): Map<string, string>[] {
  const list = (v: unknown) => (Array.isArray(v) ? (v as Record<string, string>[]) : []);
  if (doc.kind === 'ValidatingAdmissionPolicy') {
    const s = doc.spec ?? {};
    const fields = new Map<string, string>();
    list(s['variables']).forEach((v, i) => fields.set(`spec.variables[${i}].expression`, v['expression'] ?? ''));
    list(s['validations']).forEach((v, i) => {
      fields.set(`spec.validations[${i}].expression`, v['expression'] ?? '');
      if (v['messageExpression']) fields.set(`spec.validations[${i}].messageExpression`, v['messageExpression']);
    });
    list(s['auditAnnotations']).forEach((a, i) => fields.set(`spec.auditAnnotations[${i}].valueExpression`, a['valueExpression'] ?? ''));
    list(s['matchConditions']).forEach((c, i) => fields.set(`spec.matchConditions[${i}].expression`, c['expression'] ?? ''));
    return [fields];
  }
  if (doc.kind === 'MutatingWebhookConfiguration' || doc.kind === 'ValidatingWebhookConfiguration') {
    return (doc.webhooks ?? []).map((w, i) => new Map(list(w['matchConditions']).map((c, j) => [`webhooks[${i}].matchConditions[${j}].expression`, c['expression'] ?? ''])));
  }
  return [];
}

/** Writes `file` with `from` misspelt as `to` in the expression at `field` of the object named `name`. */
function misspelt(file: string, name: string, field: string, from: string, to: string): string {
  const text = readFileSync(file, 'utf8');
  const out = parseAllDocuments(text).map((d) => {
    const doc = d.toJS() as Doc;
    // Its binding bears the same name.
    if (doc.metadata?.name !== name || expressionsOf(doc).length === 0) return d.toString();
    const path = field
      .replace(/\[(\d+)\]/g, '.$1')
      .split('.')
      .map((key) => (/^\d+$/.test(key) ? Number(key) : key));
    const expression = d.getIn(path);
    if (typeof expression !== 'string' || !expression.includes(from)) throw new Error(`${relative(DEPLOY_DIR, file)}: ${name} ${field} has no '${from}'`);
    d.setIn(path, expression.replaceAll(from, to));
    return d.toString();
  });
  const target = join(work, `${name}-${field.replace(/[^a-zA-Z0-9]+/g, '-')}.yaml`);
  writeFileSync(target, out.join('---\n'));
  return target;
}

/** A policy file with one validation, on pods CREATEd in `apiGroup` (YAML). */
function podPolicy(name: string, apiGroup: string, expression: string): string {
  const file = join(work, `${name}.yaml`);
  writeFileSync(
    file,
    `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: { name: ${name} }
spec:
  matchConstraints:
    resourceRules: [{ apiGroups: [${apiGroup}], apiVersions: [v1], operations: [CREATE], resources: [pods] }]
  validations: [{ expression: ${JSON.stringify(expression)} }]
`,
  );
  return file;
}

describe('the CEL of every policy and webhook we ship type-checks against the types it reads', () => {
  it.each(['pinned', 'floor'] as const)('every expression (variables, validations, messages, match conditions) holds against its kinds and its params in the %s Kubernetes', (on) => {
    const files = baseFiles();
    const { code, reports, stderr } = typecheck(files, on);
    const shipped = files.flatMap((file) =>
      docs(file).flatMap((doc) => expressionsOf(doc).map((fields) => ({ file: relative(DEPLOY_DIR, file), name: doc.metadata?.name ?? '', fields }))),
    );
    expect(shipped.length).toBeGreaterThanOrEqual(8);
    expect(reports.map((r) => ({ file: relative(DEPLOY_DIR, r.file), findings: r.findings })), stderr).toEqual(
      shipped.map(({ file }) => ({ file, findings: [] })),
    );
    for (const [i, report] of reports.entries()) {
      const { name, fields } = shipped[i] ?? { name: '', fields: new Map() };
      expect(report.object).toContain(name);
      // Checked against a real kind, and every expression it holds was read.
      expect(report.checkedAgainst.length, report.object).toBeGreaterThan(0);
      expect(report.expressions, report.object).toBe(fields.size);
    }
    // The profile-parameterised policies are checked against the AgentProfile schema, the guard against its bindings.
    expect(reports.filter((r) => r.params).map((r) => `${r.object} ${r.params}`)).toEqual([
      'ValidatingAdmissionPolicy/outrigger-agent-exec-guard rbac.authorization.k8s.io/v1, Kind=ClusterRoleBinding',
      'ValidatingAdmissionPolicy/outrigger-agent-exec-guard-namespaced rbac.authorization.k8s.io/v1, Kind=RoleBinding',
      'ValidatingAdmissionPolicy/outrigger-forged-agent outrigger.dev/v1alpha1, Kind=AgentProfile',
      'ValidatingAdmissionPolicy/outrigger-opt-in-missing outrigger.dev/v1alpha1, Kind=AgentProfile',
    ]);
    expect(code).toBe(0);
  });

  // One misspelling per place an expression can sit, each in a copy of the shipped file.
  const MISSPELLINGS = [
    { file: 'webhook/forged-agent.yaml', name: 'outrigger-forged-agent', field: 'spec.matchConditions[0].expression', from: 'metadata.annotations', to: 'metadata.anotations' },
    { file: 'webhook/forged-agent.yaml', name: 'outrigger-forged-agent', field: 'spec.variables[1].expression', from: 'initContainers', to: 'initContainer' },
    { file: 'webhook/opt-in-missing.yaml', name: 'outrigger-opt-in-missing', field: 'spec.variables[2].expression', from: 'annotationPrefix', to: 'annotationPrefx' },
    { file: 'webhook/opt-in-missing.yaml', name: 'outrigger-opt-in-missing', field: 'spec.validations[0].messageExpression', from: 'params.metadata.name', to: 'params.metadata.nme' },
    { file: 'rbac-syncer/exec-guard.yaml', name: 'outrigger-agent-exec-guard', field: 'spec.variables[2].expression', from: 'params.subjects', to: 'params.subject' },
    { file: 'rbac-syncer/exec-guard.yaml', name: 'outrigger-agent-exec-guard-namespaced', field: 'spec.variables[4].expression', from: 'userInfo.extra', to: 'userInfo.extras' },
    { file: 'rbac-syncer/syncer-confinement.yaml', name: 'outrigger-rbac-syncer-confinement', field: 'spec.validations[1].expression', from: 'object.rules', to: 'object.rulez' },
    { file: 'cert-manager/cert-manager-confinement.yaml', name: 'outrigger-cert-manager-confinement', field: 'spec.validations[1].expression', from: 'clientConfig.?service', to: 'clientConfig.?servce' },
    { file: 'webhook/mutating-webhook-configuration.yaml', name: 'outrigger-injector', field: 'webhooks[0].matchConditions[1].expression', from: 'metadata.annotations', to: 'metadata.annotation' },
  ] as const;

  it.each(MISSPELLINGS)('a misspelt $from in $name $field is found, naming the field and the word', ({ file, name, field, from, to }) => {
    const { code, reports } = typecheck([CRD, misspelt(join(BASE, file), name, field, from, to)]);
    const report = reports.find((r) => r.object.split(/[/ ]/)[1] === name);
    expect(report?.findings.map((f) => f.field)).toEqual([field]);
    expect(report?.findings[0]?.issue).toContain(`undefined field '${to.split('.').at(-1)?.replace('?', '')}'`);
    expect(reports.filter((r) => r !== report).flatMap((r) => r.findings)).toEqual([]);
    expect(code).toBe(1);
  });

  it("reads the floor's own types: a pod field newer than 1.30 is a finding there only", () => {
    // The pod-level resources (PodSpec.resources) came with Kubernetes 1.32.
    const policy = podPolicy('pod-resources', "''", '!has(object.spec.resources)');
    expect(typecheck([policy], 'pinned').code).toBe(0);
    const floor = typecheck([policy], 'floor');
    expect(floor.reports[0]?.findings).toEqual([{ field: 'spec.validations[0].expression', issue: expect.stringContaining("undefined field 'resources'") }]);
    expect(floor.code).toBe(1);
  });

  it('a policy it cannot check against any kind is a finding, not a pass', () => {
    const { code, reports } = typecheck([podPolicy('every-group', "'*'", 'has(object.spec.containerz)')]);
    expect(reports).toEqual([
      expect.objectContaining({ object: 'ValidatingAdmissionPolicy/every-group', checkedAgainst: [], expressions: 1, findings: [{ field: 'spec.matchConstraints', issue: expect.stringContaining('nothing is checked') }] }),
    ]);
    expect(code).toBe(1);
  });
});
