import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { CommandIo } from './command-io.js';
import { run } from './outrigger.js';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'inject');
const inputs = readdirSync(FIXTURES).filter((f) => !f.includes('.injected.')).sort();
const injectedName = (f: string) => f.replace(/\.(ya?ml|json)$/, '.injected.$1');
const read = (f: string) => readFileSync(join(FIXTURES, f), 'utf8');

async function outrigger(args: string[], stdin = ''): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const io: CommandIo = { out: (t) => void (out += t), err: (t) => void (err += t), readStdin: () => stdin };
  const code = await run(args, io);
  return { code, out, err };
}

describe('outrigger inject / uninject (golden files in fixtures/inject)', () => {
  it('has a golden output for every input', () => {
    expect(inputs.length).toBeGreaterThanOrEqual(6);
    for (const input of inputs) expect(readdirSync(FIXTURES)).toContain(injectedName(input));
  });

  it.each(inputs)('%s: inject gives the golden output, uninject gives back the input byte for byte', async (input) => {
    const injected = await outrigger(['inject', '-f', join(FIXTURES, input)]);
    expect(injected.code).toBe(0);
    expect(injected.out).toBe(read(injectedName(input)));
    const removed = await outrigger(['uninject', '-f', '-'], injected.out);
    expect(removed).toMatchObject({ code: 0, out: read(input) });
  });

  it('keeps unrelated documents byte for byte, odd spacing and comments included', async () => {
    const { out } = await outrigger(['inject', '-f', join(FIXTURES, 'deployment-service-pdb.yaml')]);
    const [, service, pdb] = read('deployment-service-pdb.yaml').split(/^---\n/m);
    expect(out).toContain(`---\n${service}---\n${pdb}`);
  });

  it('says which documents it skipped and why, and gives a CronJob\'s pods their agent as a native sidecar (no warning)', async () => {
    const list = await outrigger(['inject', '-f', join(FIXTURES, 'kubectl-get-list.yaml')]);
    expect(list.err).toMatch(/^note: .*kubectl-get-list\.yaml: document 0 item 1 \(Deployment frontend\): not injected \(not-opted-in\)$/m);
    const rollout = 'apiVersion: argoproj.io/v1alpha1\nkind: Rollout\nmetadata:\n  name: orders\nspec:\n  template:\n    spec:\n      containers:\n      - name: orders\n        image: orders:1\n';
    expect(await outrigger(['inject'], rollout)).toEqual({
      code: 0,
      out: rollout,
      err: expect.stringMatching(/^note: stdin: document 0 \(Rollout orders\): not injected \(unsupported-kind\): it has a pod template, but only Pods/m),
    });
    const cron = await outrigger(['inject', '-f', join(FIXTURES, 'cronjob.yaml')]);
    expect(cron.err).not.toMatch(/^warning:/m);
    expect(cron.out).toMatch(/initContainers:\n {12}- name: xxl-agent\n/);
  });

  it('reads several files and directories into one YAML stream', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'outrigger-inject-'));
    writeFileSync(join(dir, 'b.yaml'), read('replicationcontroller.yaml'));
    writeFileSync(join(dir, 'a.yml'), read('cronjob.yaml'));
    writeFileSync(join(dir, 'notes.txt'), 'not a manifest');
    const { code, out } = await outrigger(['inject', '-f', dir, '-f', join(FIXTURES, 'statefulset-init-comments.yaml')]);
    expect(code).toBe(0);
    expect(out).toBe([read('cronjob.injected.yaml'), read('replicationcontroller.injected.yaml'), read('statefulset-init-comments.injected.yaml')].join('---\n'));
  });

  it('fails naming the file, the document and the annotation, and writes nothing', async () => {
    const bad = read('cronjob.yaml').replace('http://xxl-job-admin.jobs:8080/xxl-job-admin', 'file:///etc/passwd');
    const { code, out, err } = await outrigger(['inject'], bad);
    expect(code).toBe(1);
    expect(out).toBe('');
    expect(err).toMatch(/^outrigger inject: stdin: document 0 \(CronJob export\): .*xxl-agent\/job-addr/);
  });

  it('refuses a bad profiles file, an unknown option and an unknown command with their names', async () => {
    expect(await outrigger(['inject', '--profiles', join(FIXTURES, 'cronjob.yaml')])).toMatchObject({ code: 1, err: expect.stringMatching(/^outrigger inject: --profiles .*cronjob\.yaml: /) });
    expect(await outrigger(['inject', '--bogus'])).toMatchObject({ code: 1, err: expect.stringContaining("'--bogus'") });
    expect(await outrigger(['inspect'])).toMatchObject({ code: 2, err: expect.stringContaining('unknown command "inspect"') });
    expect(await outrigger(['check', '--output', 'yaml'])).toMatchObject({ code: 1, err: expect.stringContaining('--output must be text or json') });
  });
});
