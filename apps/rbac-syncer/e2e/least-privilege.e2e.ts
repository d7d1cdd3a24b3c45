import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CoreV1Api, KubeConfig, PatchStrategy, RbacAuthorizationV1Api, setHeaderOptions, type V1ClusterRoleBinding, type RbacV1Subject } from '@kubernetes/client-node';
import { REFERENCE_PROFILE_FILE } from '@outrigger/agent-profiles';
import { INSTALL_NAMES, rbacRules, uninstallHookPermissions } from '@outrigger/install';
import { createTestNamespace, freePort, kubeConfigFrom, startApp, type ManagedProcess, writeTokenKubeconfig } from '@outrigger/control-plane';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { bindingSubjects, createPod, deleteAllPods, eventually, installExecGuard, LABELS, sa } from './support.js';

// The syncer as deployed: its own ServiceAccount with only deploy/base/rbac-syncer/rbac.yaml, the
// built-in reference profile (ClusterRole and ClusterRoleBinding xxl-agent-exec).
const RBAC_YAML = fileURLToPath(new URL('../../../deploy/base/rbac-syncer/rbac.yaml', import.meta.url));
const CONFINEMENT_YAML = fileURLToPath(new URL('../../../deploy/base/rbac-syncer/syncer-confinement.yaml', import.meta.url));
const NAMESPACE = 'outrigger-system';
const SA_NAME = 'outrigger-rbac-syncer';
const dir = mkdtempSync(join(tmpdir(), 'rbac-syncer-least-'));

describe('rbac-syncer with least privilege', () => {
  let admin: KubeConfig;
  let kubeconfigPath: string;
  const started: ManagedProcess[] = [];

  beforeAll(async () => {
    admin = kubeConfigFrom(inject('controlPlane').kubeconfigPath);
    const core = admin.makeApiClient(CoreV1Api);
    await core.createNamespace({ body: { metadata: { name: NAMESPACE } } });
    await core.createNamespacedServiceAccount({ namespace: NAMESPACE, body: { metadata: { name: SA_NAME } } });
    kubeconfigPath = await writeTokenKubeconfig(admin, join(dir, 'kubeconfig'), NAMESPACE, SA_NAME);
  });

  const namespaces: string[] = [];

  afterAll(async () => {
    await Promise.all(started.map((s) => s.stop()));
    // The other suites' syncers count every opted-in pod on this API server.
    for (const ns of namespaces) await deleteAllPods(admin, ns);
  });

  async function start(name: string): Promise<ManagedProcess> {
    const port = await freePort();
    const child = await startApp('rbac-syncer', {
      env: { PORT: String(port), KUBECONFIG: kubeconfigPath, PROFILES_FILE: REFERENCE_PROFILE_FILE, POD_NAMESPACE: NAMESPACE, GRACE: '2s', REVOKED_KEEP: '2s', LEASE_DURATION: '3s' },
      readyUrl: `http://127.0.0.1:${port}/readyz`,
      logFile: join(dir, `${name}.log`),
    });
    started.push(child);
    return child;
  }

  it('refuses to start without its permissions and says which are missing', async () => {
    await expect(start('unprivileged')).rejects.toThrow(/exited during startup/);
    const log = readFileSync(join(dir, 'unprivileged.log'), 'utf8');
    expect(log).toMatch(/lacks \d+ permission/);
    expect(log).toContain('bind clusterroles.rbac.authorization.k8s.io named xxl-agent-exec');
    expect(log).toContain('list pods');
  });

  it('does its whole job with only the permissions of rbac.yaml', async () => {
    execFileSync(join(inject('controlPlane').binDir, 'kubectl'), ['--kubeconfig', inject('controlPlane').kubeconfigPath, 'apply', '-f', RBAC_YAML], { stdio: 'pipe' });
    await installExecGuard(inject('controlPlane').kubeconfigPath);
    await eventually(async () => start('privileged'), (p) => (p as ManagedProcess).running === true, 'the syncer to start', 60_000);
    const ns = await createTestNamespace(admin, 'least', LABELS);
    namespaces.push(ns);
    await createPod(admin, ns);
    // (other e2e files may have left opted-in pods in labelled namespaces: they count too)
    await eventually(() => bindingSubjects(admin, 'xxl-agent-exec'), (s) => s.includes(sa(ns)), 'the reference binding');
    const log = readFileSync(join(dir, 'privileged.log'), 'utf8');
    // No call refused for want of a permission (an older API server's refusal of a streaming list says "Forbidden" too, as HTTP 422).
    expect(log).not.toMatch(/HTTP 403|could not record/);
  });

  it('with the confinement policy, its open-ended binding rights reach only objects labelled as its own', async () => {
    const kubectl = (config: string, args: string[]) => {
      try {
        return execFileSync(join(inject('controlPlane').binDir, 'kubectl'), ['--kubeconfig', config, ...args], { stdio: 'pipe', encoding: 'utf8' });
      } catch (error) {
        return String((error as { stderr?: string }).stderr);
      }
    };
    const adminConfig = inject('controlPlane').kubeconfigPath;
    kubectl(adminConfig, ['apply', '-f', CONFINEMENT_YAML]);
    kubectl(adminConfig, ['create', 'clusterrolebinding', 'someone-elses', '--clusterrole=view', '--user=alice']);
    // RBAC alone lets the syncer delete any ClusterRoleBinding; the policy does not (once in force: it is read from a cache).
    await eventually(
      async () => kubectl(kubeconfigPath, ['delete', '--dry-run=server', 'clusterrolebinding', 'someone-elses']),
      (out) => out.includes('outrigger rbac-syncer confinement:') && out.includes('may write only RBAC objects labelled app.kubernetes.io/managed-by=outrigger-rbac-syncer'),
      'the confinement refusing a delete of a binding that is not the syncer\'s',
    );
    // Nor may it claim one by labelling it (a bare patch: kubectl would read it first, which the syncer may not).
    const asSyncer = kubeConfigFrom(kubeconfigPath).makeApiClient(RbacAuthorizationV1Api);
    const claim = asSyncer.patchClusterRoleBinding(
      { name: 'someone-elses', dryRun: 'All', body: { metadata: { labels: { 'app.kubernetes.io/managed-by': 'outrigger-rbac-syncer' } } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    await expect(claim).rejects.toThrow(/outrigger rbac-syncer confinement:/);
    expect(kubectl(adminConfig, ['get', 'clusterrolebinding', 'someone-elses', '-o', 'name'])).toContain('someone-elses');
    // Nor may it use what RBAC gives it (escalate on its profiles' roles, bind what it holds) to grant any right.
    const ours = { 'app.kubernetes.io/managed-by': 'outrigger-rbac-syncer', 'outrigger.dev/profile': 'xxl-job' };
    const binding = (name: string, roleRef: string, namespace: string, subjects: RbacV1Subject[]): V1ClusterRoleBinding => ({
      metadata: { name, labels: { ...ours, 'outrigger.dev/namespace': namespace } },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: roleRef },
      subjects,
    });
    const serviceAccount = (namespace: string, name = 'default'): RbacV1Subject => ({ kind: 'ServiceAccount', name, namespace });
    const refusal = (write: Promise<unknown>) => write.then(() => 'allowed', (error: unknown) => String((error as { body?: unknown }).body ?? error));
    const everything = asSyncer.patchClusterRole(
      { name: 'xxl-agent-exec', dryRun: 'All', body: { rules: [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }] } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    expect(await refusal(everything)).toContain('confinement: a profile role holds no wildcard');
    const aggregated = asSyncer.patchClusterRole(
      { name: 'xxl-agent-exec', dryRun: 'All', body: { aggregationRule: { clusterRoleSelectors: [{ matchLabels: { 'rbac.authorization.k8s.io/aggregate-to-admin': 'true' } }] } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    expect(await refusal(aggregated)).toContain('confinement: a profile role holds no wildcard');
    for (const rule of [
      { apiGroups: [''], resources: ['pods'], verbs: ['escalate'] },
      { apiGroups: ['rbac.authorization.k8s.io'], resources: ['clusterroles'], verbs: ['bind'] },
      { apiGroups: [''], resources: ['users', 'serviceaccounts'], verbs: ['impersonate'] },
      { nonResourceURLs: ['/metrics'], verbs: ['get'] },
    ]) {
      const widened = asSyncer.patchClusterRole({ name: 'xxl-agent-exec', dryRun: 'All', body: { rules: [rule] } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
      expect(await refusal(widened), JSON.stringify(rule)).toContain('confinement: a profile role holds no wildcard');
    }
    // Not labelled as its own: neither a new role nor a new binding.
    const unlabelled = asSyncer.createClusterRole({ dryRun: 'All', body: { metadata: { name: 'not-ours' }, rules: [] } });
    expect(await refusal(unlabelled)).toContain('may write only RBAC objects labelled app.kubernetes.io/managed-by=outrigger-rbac-syncer; CREATE of clusterroles not-ours is refused');
    const create = (body: V1ClusterRoleBinding) => refusal(asSyncer.createClusterRoleBinding({ body, dryRun: 'All' }));
    expect(await create({ ...binding('bare.shop', 'xxl-agent-exec', 'shop', [serviceAccount('shop')]), metadata: { name: 'bare.shop' } })).toContain('may write only RBAC objects labelled');
    // Built-in roles: RBAC refuses those whose rights the syncer lacks (it may `bind` any name), the policy the rest.
    const builtIn = /confinement: a binding names a profile's ClusterRole, never one of cluster-admin|is attempting to grant RBAC permissions not currently held/;
    for (const role of ['cluster-admin', 'admin', 'edit', 'view', 'system:aggregate-to-edit']) {
      expect(await create(binding(`builtin.${role}`.replace(':', '-'), role, 'shop', [serviceAccount('shop')])), role).toMatch(builtIn);
    }
    // Even where an admin's overlay lets the syncer `bind` them, the policy alone refuses the built-in
    // roles, the syncer's own and the Helm hook's (present only while `helm uninstall` runs).
    const hookRules = rbacRules(uninstallHookPermissions(NAMESPACE).filter((p) => p.namespace === undefined));
    const grantFile = join(dir, 'bind-grant.json');
    writeFileSync(grantFile, JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [
      { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: INSTALL_NAMES.uninstallHook }, rules: hookRules },
      { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'least-bind-grant' }, rules: [{ apiGroups: ['rbac.authorization.k8s.io'], resources: ['clusterroles'], resourceNames: [INSTALL_NAMES.uninstallHook, SA_NAME, 'cluster-admin'], verbs: ['bind'] }] },
      { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: 'least-bind-grant' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'least-bind-grant' }, subjects: [{ kind: 'ServiceAccount', name: SA_NAME, namespace: NAMESPACE }] },
    ] }));
    kubectl(adminConfig, ['apply', '-f', grantFile]);
    const byPolicy = `confinement: a binding names a profile's ClusterRole, never one of cluster-admin`;
    for (const role of [INSTALL_NAMES.uninstallHook, SA_NAME, 'cluster-admin']) {
      // RBAC's refusal (rights not held) turns into the policy's once the grant is in force.
      await eventually(() => create(binding(`granted.${role}`, role, 'shop', [serviceAccount('shop')])), (outcome) => outcome.includes(byPolicy), `the policy refusing a binding of ${role} the syncer may bind`);
    }
    kubectl(adminConfig, ['delete', 'clusterrolebinding,clusterrole', 'least-bind-grant']);
    kubectl(adminConfig, ['delete', 'clusterrole', INSTALL_NAMES.uninstallHook]);
    // A RoleBinding (RoleBinding profiles, whose overlay grants the syncer rolebindings) holds only its own namespace's ServiceAccounts, and no built-in role either.
    kubectl(adminConfig, ['create', 'clusterrole', 'least-rolebindings', '--verb=create', '--resource=rolebindings.rbac.authorization.k8s.io']);
    kubectl(adminConfig, ['create', 'clusterrolebinding', 'least-rolebindings', '--clusterrole=least-rolebindings', `--serviceaccount=${NAMESPACE}:${SA_NAME}`]);
    const roleBinding = (roleRef: string, subjectNamespace: string) =>
      refusal(asSyncer.createNamespacedRoleBinding({ namespace: 'default', dryRun: 'All', body: { metadata: { name: `rb-${roleRef}`, labels: ours }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: roleRef }, subjects: [serviceAccount(subjectNamespace)] } }));
    await eventually(() => roleBinding('xxl-agent-exec', 'default'), (outcome) => outcome === 'allowed', 'the rolebindings grant in force');
    expect(await roleBinding('xxl-agent-exec', 'pay')).toContain('confinement: a binding holds only ServiceAccounts of the namespace it is for');
    expect(await roleBinding('cluster-admin', 'default')).toMatch(builtIn);
    kubectl(adminConfig, ['delete', 'clusterrolebinding,clusterrole', 'least-rolebindings']);
    expect(await create(binding('copy.shop', SA_NAME, 'shop', [serviceAccount('shop')]))).toContain(`confinement: a binding names a profile's ClusterRole, never one of cluster-admin`);
    expect(await create(binding('everyone.shop', 'xxl-agent-exec', 'shop', [{ kind: 'Group', apiGroup: 'rbac.authorization.k8s.io', name: 'system:authenticated' }]))).toContain('confinement: a binding holds only ServiceAccounts of the namespace it is for');
    expect(await create(binding('self.shop', 'xxl-agent-exec', NAMESPACE, [serviceAccount(NAMESPACE, SA_NAME)]))).toContain('confinement: a binding holds only ServiceAccounts');
    expect(await create(binding('system.kube-system', 'xxl-agent-exec', 'kube-system', [serviceAccount('kube-system')]))).toContain('confinement: a binding holds only ServiceAccounts');
    expect(await create(binding('elsewhere.shop', 'xxl-agent-exec', 'shop', [serviceAccount('pay')]))).toContain('confinement: a binding holds only ServiceAccounts');
    // What the syncer writes passes.
    expect(await create(binding('xxl-agent-exec.shop', 'xxl-agent-exec', 'shop', [serviceAccount('shop', 'web')]))).toBe('allowed');
    // And it still does its whole job under the policy.
    const ns = await createTestNamespace(admin, 'least-confined', LABELS);
    namespaces.push(ns);
    await createPod(admin, ns);
    await eventually(() => bindingSubjects(admin, 'xxl-agent-exec'), (s) => s.includes(sa(ns)), 'binding under the confinement');
    kubectl(adminConfig, ['delete', '-f', CONFINEMENT_YAML]);
    kubectl(adminConfig, ['delete', 'clusterrolebinding', 'someone-elses']);
  });
});
