import { execFileSync, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, inject, it } from 'vitest';

// The built CLI as users run it (`npx outrigger` runs this bin), and its output on a real API server.
const bin = fileURLToPath(new URL('../bin/outrigger.js', import.meta.url));
const FIXTURES = fileURLToPath(new URL('../fixtures/inject', import.meta.url));
const { kubeconfigPath, binDir } = inject('controlPlane');

function outrigger(args: string[], input?: string) {
  return spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8', input });
}

function kubectl(args: string[], input?: string): string {
  return execFileSync(join(binDir, 'kubectl'), ['--kubeconfig', kubeconfigPath, ...args], { encoding: 'utf8', input, stdio: ['pipe', 'pipe', 'pipe'] });
}

beforeAll(() => {
  kubectl(['create', 'namespace', 'golden']);
});

describe('outrigger inject (built bin)', () => {
  it.each(readdirSync(FIXTURES).filter((f) => !f.includes('.injected.')))('%s: its output is what the API server accepts (server-side dry run)', (fixture) => {
    const result = outrigger(['inject', '-f', join(FIXTURES, fixture)]);
    expect(result.status, result.stderr).toBe(0);
    expect(() => kubectl(['apply', '--server-side', '--dry-run=server', '-f', '-'], result.stdout)).not.toThrow();
  });

  it('reads stdin and leaves documents that did not opt in byte for byte', () => {
    const plain = 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: plain # keep me\nspec:\n  containers:\n    - name: app\n      image: app:1\n';
    const result = outrigger(['inject'], plain);
    expect(result.status).toBe(0);
    expect(result.stdout).toBe(plain);
  });

  it('fails with the file, the document and the annotation named, and writes nothing', () => {
    const bad = readFileSync(join(FIXTURES, 'statefulset-init-comments.yaml'), 'utf8').replace('http://xxl-job-admin.jobs:8080/xxl-job-admin', 'ftp://admin');
    const result = outrigger(['inject', '-f', '-'], bad);
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/^outrigger inject: stdin: document 0 \(StatefulSet ledger\).*xxl-agent\/job-addr/);
    expect(result.stdout).toBe('');
  });

  it('prints its usage and version', () => {
    expect(outrigger(['--help']).stdout).toMatch(/^outrigger \d+\.\d+\.\d+: /);
    expect(outrigger(['version']).stdout).toMatch(/^\d+\.\d+\.\d+\n$/);
  });
});
