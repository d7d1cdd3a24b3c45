import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { repoRoot, resolveToolDir } from '@outrigger/control-plane';
import { INJECTION_LABEL_KEY, INJECTION_LABEL_VALUE } from '@outrigger/admission';
import { INSTALL_NAMES } from '@outrigger/install';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { churnPods } from './pod-churn.ts';
import { boundServiceAccounts, createNamespace, eventually, kubectl, outrigger, OUTRIGGER_NAMESPACE } from './support.ts';

// Outrigger as a platform team installs it with Helm: the chart from deploy/helm/outrigger, the
// images built from this repository (on the node under their local names).
const CHART = join(repoRoot(), 'deploy', 'helm', 'outrigger');
const { kubeconfigPath, ctr } = inject('cluster');
const SERVICES = { injector: 'injector', rbacSyncer: 'rbac-syncer', certManager: 'cert-manager' };
const HELM_ENV = { ...process.env, HELM_CACHE_HOME: '/tmp/outrigger-helm/cache', HELM_CONFIG_HOME: '/tmp/outrigger-helm/config', HELM_DATA_HOME: '/tmp/outrigger-helm/data' };
let helmBin: string;
let installNotes = '';

function images(tag: string): string[] {
  return Object.entries(SERVICES).flatMap(([key, image]) => ['--set', `images.${key}.repository=localhost/outrigger/${image}`, '--set', `images.${key}.tag=${tag}`]);
}

/** Helm against the suite's cluster, whatever its exit. */
function runHelm(args: readonly string[]) {
  return spawnSync(helmBin, [...args, '--kubeconfig', kubeconfigPath], { encoding: 'utf8', env: HELM_ENV, stdio: ['ignore', 'pipe', 'pipe'] });
}

function helm(args: readonly string[]): string {
  const result = runHelm(args);
  if (result.status !== 0) throw new Error(`helm ${args.join(' ')}: ${result.stderr || result.error?.message || `exit ${result.status ?? result.signal}`}`, { cause: result.error });
  return result.stdout;
}

const synced = () => kubectl(['get', 'clusterroles,clusterrolebindings,rolebindings', '-A', '-l', 'app.kubernetes.io/managed-by=outrigger-rbac-syncer', '-o', 'name']).trim();
const checkHookLeft = () =>
  kubectl(['get', 'pods,serviceaccounts,roles,rolebindings,clusterroles,clusterrolebindings', '-A', '-l', `app.kubernetes.io/name=${INSTALL_NAMES.checkHook}`, '-o', 'name']).trim();
const partOfOutrigger = () =>
  kubectl(['get', 'deployments,jobs,services,serviceaccounts,roles,rolebindings,networkpolicies,poddisruptionbudgets,clusterroles,clusterrolebindings,mutatingwebhookconfigurations,validatingadmissionpolicies,validatingadmissionpolicybindings,namespaces', '-A', '-l', 'app.kubernetes.io/part-of=outrigger', '-o', 'name']).trim();

beforeAll(async () => {
  helmBin = join(await resolveToolDir('OUTRIGGER_HELM_BIN', 'tools/helm/helm/build.sh', ['helm']), 'helm');
});

describe('Outrigger installed with Helm', () => {
  it('helm install: every Deployment rolls out and outrigger check passes', async () => {
    installNotes = helm(['install', 'outrigger', CHART, '--namespace', 'default', '--wait', '--timeout', '8m', ...images('local')]);
    expect(installNotes).toContain(`kubectl label namespace <namespace> ${INJECTION_LABEL_KEY}=${INJECTION_LABEL_VALUE}`);
    await eventually(() => {
      const check = outrigger(['check']);
      expect(check.code, check.stdout + check.stderr).toBe(0);
    }, 'outrigger check to pass');
  });

  it("helm test, as the install's notes print it: outrigger check passes in a Pod under the test's own read-only ServiceAccount, whose access goes when it passes", () => {
    const printed = /^ {2}helm (test .*)$/m.exec(installNotes)?.[1];
    expect(printed).toBe('test outrigger --namespace default --logs');
    const out = helm([...(printed as string).split(' '), '--timeout', '5m']);
    expect(out).toMatch(new RegExp(`TEST SUITE:\\s+${INSTALL_NAMES.checkHook}[\\s\\S]*Phase:\\s+Succeeded`));
    // The Pod's log: check judged the install from inside the cluster, every read allowed.
    expect(out).toMatch(/^ok {3}ca-bundle: /m);
    expect(out).toMatch(/^ok {3}rbac outrigger-injector: /m);
    expect(out).toMatch(/\nall \d+ checks passed\n/);
    expect(checkHookLeft()).toBe('');
  });

  it('helm test fails, the log naming the failed check, while the injector has no ready replica; the next passing run removes what the failed one kept', async () => {
    const replicas = kubectl(['get', 'deployment', INSTALL_NAMES.injector, '-n', OUTRIGGER_NAMESPACE, '-o', 'jsonpath={.spec.replicas}']);
    kubectl(['scale', 'deployment', INSTALL_NAMES.injector, '-n', OUTRIGGER_NAMESPACE, '--replicas=0']);
    try {
      await eventually(() => expect(kubectl(['get', 'pods', '-n', OUTRIGGER_NAMESPACE, '-l', 'app.kubernetes.io/component=injector', '-o', 'name']).trim()).toBe(''), 'the injector pods to go');
      const failed = runHelm(['test', 'outrigger', '--namespace', 'default', '--logs', '--timeout', '5m']);
      expect(failed.status, failed.stdout + failed.stderr).not.toBe(0);
      expect(failed.stderr).toContain(INSTALL_NAMES.checkHook);
      expect(failed.stdout).toMatch(/^FAIL .*injector/m);
      // What failed is the install, not what the test may read.
      expect(failed.stdout).not.toMatch(/^FAIL read:/m);
      // Helm keeps the failed Pod for its logs, and removes the access it ran with.
      expect(checkHookLeft()).toBe(`pod/${INSTALL_NAMES.checkHook}`);
    } finally {
      kubectl(['scale', 'deployment', INSTALL_NAMES.injector, '-n', OUTRIGGER_NAMESPACE, `--replicas=${replicas}`]);
      kubectl(['rollout', 'status', 'deployment', INSTALL_NAMES.injector, '-n', OUTRIGGER_NAMESPACE, '--timeout=5m']);
    }
    await eventually(() => {
      const check = outrigger(['check']);
      expect(check.code, check.stdout + check.stderr).toBe(0);
    }, 'outrigger check to pass again');
    helm(['test', 'outrigger', '--namespace', 'default', '--timeout', '5m']);
    expect(checkHookLeft()).toBe('');
  });

  it('helm upgrade to other images while pods are created throughout: 0 failed creates, every pod with its agent', async () => {
    for (const image of Object.values(SERVICES)) execFileSync(ctr[0] as string, [...ctr.slice(1), 'images', 'tag', '--force', `localhost/outrigger/${image}:local`, `localhost/outrigger/${image}:helm-upgrade`]);
    const ns = createNamespace('helm-churn');
    const upgrade = promisify(execFile)(helmBin, ['upgrade', 'outrigger', CHART, '--namespace', 'default', '--wait', '--timeout', '8m', ...images('helm-upgrade'), '--kubeconfig', kubeconfigPath], { env: HELM_ENV });
    const churn = await churnPods(ns, upgrade);
    await upgrade;
    expect(churn.errors).toEqual([]);
    expect(churn.failed).toBe(0);
    expect(churn.withoutAgent).toBe(0);
    expect(churn.created).toBeGreaterThan(0);
    const deployed = kubectl(['get', 'deployments', '-n', OUTRIGGER_NAMESPACE, '-o', 'jsonpath={.items[*].spec.template.spec.containers[0].image}']).split(' ');
    expect(deployed.sort()).toEqual(Object.values(SERVICES).map((s) => `localhost/outrigger/${s}:helm-upgrade`).sort());
  });

  it("helm uninstall alone (its pre-delete hook): nothing labelled part-of Outrigger and no agent binding is left; the CRD stays, as Helm leaves crds/", async () => {
    // An injected pod whose ServiceAccount the rbac-syncer binds (never scheduled: the node is spared).
    const ns = createNamespace('helm-bound');
    kubectl(['create', '-n', ns, '-f', '-'], JSON.stringify({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'bound', annotations: { 'xxl-agent/enable': 'true', 'xxl-agent/job-addr': 'http://xxl-job-admin.jobs:8080/xxl-job-admin', 'xxl-agent/target-container': 'app', 'xxl-agent/job-name': 'bound' } },
      spec: { schedulingGates: [{ name: 'outrigger.dev/never' }], containers: [{ name: 'app', image: 'localhost/busybox:local' }] },
    }));
    await eventually(() => expect(boundServiceAccounts().some((sa) => sa.startsWith(`${ns}/`))).toBe(true), 'the rbac-syncer to bind the pod');
    expect(synced()).not.toBe('');
    helm(['uninstall', 'outrigger', '--namespace', 'default', '--wait', '--timeout', '5m']);
    expect(() => helm(['status', 'outrigger', '--namespace', 'default'])).toThrow(/release: not found/);
    // The hook ran before Helm deleted the release: the syncer's bindings and roles are gone, and so are the hook's own objects.
    expect(synced()).toBe('');
    await eventually(() => expect(partOfOutrigger()).toBe(''), 'nothing labelled part-of Outrigger');
    expect(synced()).toBe('');
    expect(kubectl(['get', 'customresourcedefinitions', '-o', 'name'])).toContain('agentprofiles.outrigger.dev');
    // What Helm leaves, `outrigger uninstall` removes (the README's last step).
    const uninstall = outrigger(['uninstall']);
    expect(uninstall.code, uninstall.stderr).toBe(0);
    expect(uninstall.stdout).toContain('CustomResourceDefinition agentprofiles.outrigger.dev');
    // The API server removes a deleted CRD once its AgentProfiles are cleaned up: gone soon, not at once.
    await eventually(() => expect(kubectl(['get', 'customresourcedefinitions', '-o', 'name'])).not.toContain('agentprofiles.outrigger.dev'), 'the CRD to be gone');
  });
});
