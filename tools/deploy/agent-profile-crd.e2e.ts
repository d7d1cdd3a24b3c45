import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAgentProfile } from '@outrigger/agent-profiles';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { parse } from 'yaml';
import { DEPLOY_DIR } from './render.ts';

// The AgentProfile CRD on a real kube-apiserver, and the services' own validation, on the same
// fixtures: they agree, and what the API server refuses names the field. A fixture says its
// expected verdict and field in its first lines (`# verdict: accepted|refused|zod-only`).
const { kubeconfigPath, binDir } = inject('controlPlane');
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

function expectation(text: string): { verdict: string; field?: string } {
  const verdict = /^# verdict: (\S+)$/m.exec(text)?.[1] ?? 'missing';
  const field = /^# field: (\S+)$/m.exec(text)?.[1];
  return { verdict, ...(field ? { field } : {}) };
}

beforeAll(() => {
  const applied = kubectl(['apply', '--server-side', '-k', join(DEPLOY_DIR, 'base/crd')]);
  if (!applied.ok) throw new Error(applied.output);
  kubectl(['wait', '--for=condition=Established', '--timeout=60s', 'customresourcedefinitions/agentprofiles.outrigger.dev']);
});

describe('AgentProfile validation: the API server (generated CRD) and the services (zod) agree', () => {
  it('has fixtures of every kind', () => {
    expect(fixtures.map((f) => expectation(readFileSync(join(FIXTURES, f), 'utf8')).verdict)).toEqual(expect.arrayContaining(['accepted', 'refused', 'zod-only']));
  });

  it.each(fixtures)('%s', (fixture) => {
    const text = readFileSync(join(FIXTURES, fixture), 'utf8');
    const { verdict, field } = expectation(text);
    const server = kubectl(['apply', '--dry-run=server', '-f', '-'], text);
    const services = parseAgentProfile(parse(text));
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
