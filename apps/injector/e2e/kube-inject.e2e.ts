import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { describe, expect, it } from 'vitest';

const cli = fileURLToPath(new URL('../../../dist/apps/injector/kube-inject.js', import.meta.url));
const fixture = (name: string) => fileURLToPath(new URL(`../../../libs/admission/fixtures/manifests/${name}`, import.meta.url));

function run(args: string[], input?: string) {
  return spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8', input });
}

describe('kube-inject (built CLI)', () => {
  it('injects the agent into opted-in pod templates of a multi-document file', () => {
    const result = run(['-f', fixture('shop.yaml')]);
    expect(result.status).toBe(0);
    const docs = parseAllDocuments(result.stdout).map((d) => d.toJS());
    const orders = docs.find((d) => d?.kind === 'Deployment' && d.metadata.name === 'orders');
    expect(orders.spec.template.spec.containers.map((c: { name: string }) => c.name)).toEqual(['orders', 'xxl-agent']);
    expect(docs.find((d) => d?.kind === 'Namespace')).toBeDefined();
  });

  it('reads stdin and leaves documents that did not opt in byte for byte', () => {
    const plain = 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: plain # keep me\nspec:\n  containers:\n    - name: app\n      image: app:1\n';
    const result = run(['-f', '-'], plain);
    expect(result.status).toBe(0);
    expect(result.stdout).toBe(plain);
  });

  it('fails with the document and the annotation named', () => {
    const result = run(['-f', fixture('invalid-job-addr.yaml')]);
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/document \d+ \(StatefulSet ledger\).*xxl-agent\/job-addr/);
    expect(result.stdout).toBe('');
  });

  it('refuses a bad profiles file with its reason', () => {
    const result = run(['--profiles', fixture('shop.yaml'), '-f', '-'], readFileSync(fixture('shop.yaml'), 'utf8'));
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/^kube-inject: profiles: /);
  });
});
