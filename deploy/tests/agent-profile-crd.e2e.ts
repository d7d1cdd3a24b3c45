import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAgentProfile, readProfileExamples, REFERENCE_PROFILE_FILE } from '@outrigger/agent-profiles';
import jsonpatch, { type Operation } from 'fast-json-patch';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { parse } from 'yaml';
import { DEPLOY_DIR, suiteKubectl } from '@outrigger/control-plane';

// The AgentProfile CRD on a real kube-apiserver, and the services' own validation, on the same
// fixtures: they agree, and what the API server refuses names the field. A fixture says its
// expected verdict and field in its first lines (`# verdict: accepted|refused|zod-only`), then
// holds either a JSON patch (a YAML list, RFC 6902) of the reference profile, which has its one
// copy in deploy/base/profiles, or (a mapping) a whole AgentProfile not derived from it.
const { kubeconfigPath, binDir } = inject('controlPlane');
const { established } = suiteKubectl(kubeconfigPath, binDir);
const FIXTURES = join(import.meta.dirname, 'fixtures', 'agent-profiles');
const fixtures = readdirSync(FIXTURES).filter((f) => f.endsWith('.yaml')).sort();

function kubectl(args: readonly string[], input?: string): { ok: boolean; output: string } {
  try {
    return { ok: true, output: execFileSync(join(binDir, 'kubectl'), ['--kubeconfig', kubeconfigPath, ...args], { encoding: 'utf8', input, stdio: ['pipe', 'pipe', 'pipe'] }) };
  } catch (error) {
    const e = error as { stderr?: string; message: string };
    return { ok: false, output: e.stderr ?? e.message };
  }
}

const REFERENCE: unknown = parse(readFileSync(REFERENCE_PROFILE_FILE, 'utf8'));

/** The reference profile with `operations` applied; throws on an operation that does not apply (a failed `test`, a missing path). */
function patchedReference(operations: Operation[]): unknown {
  return jsonpatch.applyPatch(structuredClone(REFERENCE), operations, true, false).newDocument;
}

/** The object a fixture stands for: the reference profile patched, or the fixture's own object. */
function fixtureObject(text: string): unknown {
  const content: unknown = parse(text);
  return Array.isArray(content) ? patchedReference(content as Operation[]) : content;
}

function expectation(text: string): { verdict: string; field?: string } {
  const verdict = /^# verdict: (\S+)$/m.exec(text)?.[1] ?? 'missing';
  const field = /^# field: (\S+)$/m.exec(text)?.[1];
  return { verdict, ...(field ? { field } : {}) };
}

beforeAll(async () => {
  const applied = kubectl(['apply', '--server-side', '-k', join(DEPLOY_DIR, 'base/crd')]);
  if (!applied.ok) throw new Error(applied.output);
  await established(['agentprofiles.outrigger.dev']);
});

describe('AgentProfile validation: the API server (generated CRD) and the services (zod) agree', () => {
  it('accepts every example of the AgentProfile reference (docs/agent-profile-examples) as written', () => {
    const examples = readProfileExamples(join(DEPLOY_DIR, '..'));
    expect(examples.length).toBeGreaterThan(0);
    for (const { file, text } of examples) {
      const applied = kubectl(['apply', '--dry-run=server', '-f', '-'], text);
      expect(applied.ok ? '' : applied.output, file).toBe('');
    }
  });

  it('has fixtures of every kind', () => {
    expect(fixtures.map((f) => expectation(readFileSync(join(FIXTURES, f), 'utf8')).verdict)).toEqual(expect.arrayContaining(['accepted', 'refused', 'zod-only']));
  });

  it.each(fixtures)('%s', (fixture) => {
    const text = readFileSync(join(FIXTURES, fixture), 'utf8');
    const { verdict, field } = expectation(text);
    const object = fixtureObject(text);
    const server = kubectl(['apply', '--dry-run=server', '-f', '-'], JSON.stringify(object));
    const services = parseAgentProfile(object);
    if (verdict === 'accepted') {
      expect(server, 'the API server accepts it').toMatchObject({ ok: true });
      expect(services, 'the services accept it').toMatchObject({ ok: true });
    } else if (verdict === 'refused') {
      expect(server.ok, 'the API server refuses it').toBe(false);
      expect(server.output).toContain(field);
      expect(services.ok, 'the services refuse it too').toBe(false);
      if (!services.ok) expect(services.error).toContain(field?.replace(/^spec\.bogus$/, 'spec'));
    } else {
      // What only code can check (see agent-profile-crd.ts): the API server takes it, the services keep the last good generation.
      expect(server.ok, 'the API server cannot tell').toBe(true);
      expect(services.ok).toBe(false);
      if (!services.ok) expect(services.error).toContain(field);
    }
  });
});

describe('AgentProfile updates: the API server refuses a new rbac.clusterRole while the bindings keep their name', () => {
  const name = 'transition-rules';
  const stored = patchedReference([{ op: 'replace', path: '/metadata/name', value: name }]);
  const update = (operations: Operation[]) => kubectl(['replace', '--dry-run=server', '-f', '-'], JSON.stringify(jsonpatch.applyPatch(structuredClone(stored), operations, true, false).newDocument));

  beforeAll(() => {
    const created = kubectl(['create', '-f', '-'], JSON.stringify(stored));
    if (!created.ok) throw new Error(created.output);
    return () => void kubectl(['delete', 'agentprofile', name, '--ignore-not-found']);
  });

  it('refuses the role changed alone, naming the field and the way out', () => {
    const refused = update([{ op: 'replace', path: '/spec/rbac/clusterRole', value: 'renamed-exec' }]);
    expect(refused.ok).toBe(false);
    expect(refused.output).toContain('spec.rbac.clusterRole');
    expect(refused.output).toContain('rename rbac.binding.name in the same edit');
  });

  it('accepts the role changed with the bindings\' name or kind, or with the name left to follow the role', () => {
    const role = { op: 'replace', path: '/spec/rbac/clusterRole', value: 'renamed-exec' } as const;
    expect(update([role, { op: 'replace', path: '/spec/rbac/binding/name', value: 'renamed-exec' }])).toMatchObject({ ok: true });
    expect(update([role, { op: 'replace', path: '/spec/rbac/binding/kind', value: 'RoleBinding' }])).toMatchObject({ ok: true });
    expect(update([role, { op: 'remove', path: '/spec/rbac/binding/name' }])).toMatchObject({ ok: true });
    expect(update([{ op: 'replace', path: '/spec/container/image', value: 'registry.example/agent:2' }])).toMatchObject({ ok: true });
  });
});

describe('the fixtures: JSON patches of the reference profile apply as written', () => {
  const patches = fixtures.map((f) => [f, parse(readFileSync(join(FIXTURES, f), 'utf8')) as unknown] as const).filter(([, content]) => Array.isArray(content));

  it('most fixtures are patches', () => {
    expect(patches.length).toBeGreaterThan(fixtures.length / 2);
  });

  it.each(patches)('%s applies cleanly and changes what it names', (fixture, operations) => {
    const object = patchedReference(operations as Operation[]);
    const changed = jsonpatch.compare(REFERENCE as object, object as object).map((op) => op.path);
    const { verdict, field } = expectation(readFileSync(join(FIXTURES, fixture), 'utf8'));
    if (verdict === 'accepted') {
      expect(changed).toEqual(['/metadata/name']);
    } else {
      // The field the fixture names, as a JSON pointer, is among what its patch changes.
      const pointer = `/${(field ?? '').replace(/\[(\d+)\]/g, '.$1').split('.').join('/')}`;
      expect(changed.some((path) => path.startsWith(pointer)), `${changed.join(', ')} touch ${pointer}`).toBe(true);
    }
  });

  it('refuses an operation that does not apply instead of returning the reference unchanged', () => {
    expect(() => patchedReference([{ op: 'test', path: '/spec/container/name', value: 'not-the-reference' }])).toThrow(/Test operation failed/);
    expect(() => patchedReference([{ op: 'test', path: '/spec/no/such/path', value: 'x' }])).toThrow();
    expect(() => patchedReference([{ op: 'replace', path: '/spec/no-such-field', value: 'x' }])).toThrow();
    expect(() => patchedReference([{ op: 'remove', path: '/spec/parameters/9' }])).toThrow();
    expect(() => patchedReference([{ op: 'copy', from: '/spec/no-such-field', path: '/spec/annotationPrefix' }])).toThrow();
  });
});
