import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readFileSync } from 'node:fs';
import { INSTALL_NAMES } from '@outrigger/install';
import { type KubeClient, loadKubeClient } from '@outrigger/kube';
import { render, type RenderedObject, suiteKubectl } from '@outrigger/control-plane';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { manifestObjects, restoreObjects } from '../src/restore/restore-objects.js';

// The repairs `outrigger check` prints, run as printed against a real API server holding the dev
// overlay's objects (no nodes: nothing runs, which check does not need to name what is missing).
const bin = fileURLToPath(new URL('../bin/outrigger.js', import.meta.url));
const REPO = fileURLToPath(new URL('../../..', import.meta.url));
const { kubeconfigPath, binDir } = inject('controlPlane');
const { kubectl, getJson, established } = suiteKubectl(kubeconfigPath, binDir);
const NS = INSTALL_NAMES.namespace;
const overlay = render(join(binDir, 'kubectl'), 'overlays/dev');
const asList = (items: readonly RenderedObject[]) => JSON.stringify({ apiVersion: 'v1', kind: 'List', items });

interface CheckLine {
  readonly check: string;
  readonly result: string;
  readonly hint?: string;
  readonly fix?: string;
}

/** The CLI from the repository root, as an admin runs it. */
function outrigger(args: readonly string[], input?: string) {
  return spawnSync(process.execPath, [bin, ...args], { cwd: REPO, encoding: 'utf8', input, env: { ...process.env, KUBECONFIG: kubeconfigPath } });
}

function failedLine(check: string): CheckLine {
  const result = outrigger(['check', '--output', 'json']);
  const line = (JSON.parse(result.stdout) as { checks: CheckLine[] }).checks.find((c) => c.check === check);
  expect(line, check).toMatchObject({ result: 'fail' });
  return line as CheckLine;
}

/** The object as the API server has it, against the same object as the overlay renders it. */
function expectAsOverlayHasIt(kind: string, name: string, namespace?: string): void {
  const rendered = overlay.find((o) => o.kind === kind && o.metadata.name === name);
  const live = getJson([kind, name, ...(namespace ? ['-n', namespace] : [])]);
  expect(live, `${kind} ${name}`).toMatchObject(rendered as object);
  expect(live.metadata.labels, `${kind} ${name}`).toEqual(rendered?.metadata.labels);
}

beforeAll(async () => {
  kubectl(['apply', '--server-side', '-f', '-'], asList(overlay.filter((o) => o.kind === 'CustomResourceDefinition')));
  await established(['agentprofiles.outrigger.dev']);
  kubectl(['create', '-f', '-'], asList(overlay.filter((o) => o.kind !== 'CustomResourceDefinition')));
});

afterAll(() => {
  kubectl(['delete', '--ignore-not-found', '--wait=false', '-f', '-'], asList([...overlay].reverse()));
});

describe('outrigger restore, as `outrigger check` prints it', () => {
  it('brings back deleted objects of an overlay install as the overlay has them, its instance label included', () => {
    const deleted: [string, string, string, string?][] = [
      ['webhook', 'Service', INSTALL_NAMES.injector, NS],
      [`rbac ${INSTALL_NAMES.rbacSyncer}`, 'ClusterRoleBinding', INSTALL_NAMES.rbacSyncer],
      ['forged-agent', 'ValidatingAdmissionPolicy', INSTALL_NAMES.forgedAgentPolicy],
    ];
    for (const [, kind, name, namespace] of deleted) kubectl(['delete', kind, name, ...(namespace ? ['-n', namespace] : [])]);
    for (const [check] of deleted) {
      const fix = failedLine(check).fix ?? '';
      expect(fix).toMatch(/^outrigger restore -f deploy\/base\//);
      const run = outrigger(fix.split(' ').slice(1));
      expect(run.status, run.stderr).toBe(0);
    }
    for (const [, kind, name, namespace] of deleted) expectAsOverlayHasIt(kind, name, namespace);
  });

  it("creates nothing from another overlay's manifests, and from the installed overlay only what is missing", () => {
    kubectl(['delete', 'service', INSTALL_NAMES.injector, '-n', NS]);
    const local = outrigger(['restore', '-f', '-'], kubectl(['kustomize', join(REPO, 'deploy/overlays/local')]));
    expect(local.status).toBe(1);
    expect(local.stderr).toMatch(/is labelled app\.kubernetes\.io\/instance=outrigger-local, but the install in outrigger-system has app\.kubernetes\.io\/instance=outrigger-dev/);
    expect(getJson(['service', INSTALL_NAMES.injector, '-n', NS])).toBeUndefined();
    expect(getJson(['agentprofile', 'xxl-job-native'])).toBeUndefined();

    const dev = outrigger(['restore', '-f', '-'], kubectl(['kustomize', join(REPO, 'deploy/overlays/dev')]));
    expect(dev.status, dev.stderr).toBe(0);
    expect(dev.stdout.split('\n').filter((l) => l.startsWith('created'))).toEqual([`created Service ${NS}/${INSTALL_NAMES.injector}`]);
    expectAsOverlayHasIt('Service', INSTALL_NAMES.injector, NS);
  });

  it('puts a changed admission policy back as the overlay has it, label included, with --replace', () => {
    const name = INSTALL_NAMES.forgedAgentPolicy;
    kubectl(['patch', 'validatingadmissionpolicybinding', name, '--type=merge', '-p', JSON.stringify({ spec: { validationActions: ['Warn'] } })]);
    const fix = failedLine('forged-agent').fix ?? '';
    expect(fix).toBe('outrigger restore --replace -f deploy/base/webhook/forged-agent.yaml');
    const run = outrigger(fix.split(' ').slice(1));
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toContain(`replaced ValidatingAdmissionPolicyBinding ${name}`);
    expectAsOverlayHasIt('ValidatingAdmissionPolicyBinding', name);
    expectAsOverlayHasIt('ValidatingAdmissionPolicy', name);
    // What an overlay may change is never replaced: the whole restore is refused before any write.
    const rbac = outrigger(['restore', '--replace', '-f', 'deploy/base/webhook/forged-agent.yaml', '-f', 'deploy/base/rbac-syncer/rbac.yaml']);
    expect(rbac.status).toBe(1);
    expect(rbac.stderr).toMatch(/ServiceAccount outrigger-rbac-syncer: --replace puts back only admission policies and their bindings \(ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding\)/);
    expect(rbac.stdout).toBe('');
  });

  it('refuses a --replace whose object changes between its read and its write, and keeps that change', async () => {
    const name = INSTALL_NAMES.forgedAgentPolicy;
    const file = 'deploy/base/webhook/forged-agent.yaml';
    const changeMeanwhile = () => kubectl(['annotate', 'validatingadmissionpolicy', name, 'changed-meanwhile=yes']);
    // The real API server's client, with someone else's change landing just before the restore's PUT.
    const real = loadKubeClient(kubeconfigPath);
    let raced = false;
    const racing: KubeClient = {
      server: real.server,
      request: (request) => {
        if (request.method === 'PUT' && !raced) {
          raced = true;
          changeMeanwhile();
        }
        return real.request(request);
      },
    };
    await expect(restoreObjects(racing, manifestObjects(readFileSync(join(REPO, file), 'utf8'), file), NS, { replace: true })).rejects.toThrow(
      `cannot replace ValidatingAdmissionPolicy ${name}: it changed while being replaced; run the command again`,
    );
    expect(raced).toBe(true);
    expect(getJson(['validatingadmissionpolicy', name]).metadata.annotations).toMatchObject({ 'changed-meanwhile': 'yes' });
    // Run again, as the message says: the object is put back as shipped, without the change made meanwhile.
    const again = outrigger(['restore', '--replace', '-f', file]);
    expect(again.status, again.stderr).toBe(0);
    expectAsOverlayHasIt('ValidatingAdmissionPolicy', name);
    expect(getJson(['validatingadmissionpolicy', name]).metadata.annotations?.['changed-meanwhile']).toBeUndefined();
  });

  it("on a Helm install, check hints Helm's repair of its release, and restore refuses naming it", () => {
    // What `helm install platform --namespace default` puts on every object of its release.
    kubectl(['label', 'deployments', '--all', '-n', NS, 'app.kubernetes.io/managed-by=Helm']);
    kubectl(['annotate', 'deployments', '--all', '-n', NS, 'meta.helm.sh/release-name=platform', 'meta.helm.sh/release-namespace=default']);
    kubectl(['delete', 'service', INSTALL_NAMES.injector, '-n', NS]);
    const line = failedLine('webhook');
    expect(line.fix).toBeUndefined();
    expect(line.hint).toContain('helm upgrade platform <your chart> --version <its installed version> --namespace default --reuse-values');

    const refused = outrigger(['restore', '-f', 'deploy/base/injector/service.yaml']);
    expect(refused.status).toBe(1);
    expect(refused.stderr).toContain('is Helm release platform in namespace default');
    expect(refused.stderr).toContain('helm upgrade platform');
    expect(getJson(['service', INSTALL_NAMES.injector, '-n', NS])).toBeUndefined();
  });
});
