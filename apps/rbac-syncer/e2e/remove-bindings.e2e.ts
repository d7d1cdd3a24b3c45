import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createTestNamespace, kubeConfigFrom, repoRoot, writeTokenKubeconfig } from '@outrigger/control-plane';
import { INSTALL_NAMES, rbacRules, uninstallHookPermissions } from '@outrigger/install';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { eventually } from './support.js';

// The Helm chart's pre-delete hook (node remove-bindings.js, built) as the chart runs it: under a
// ServiceAccount named like the chart's with exactly libs/install's uninstallHookPermissions, the
// shipped syncer confinement in force.
const CONFINEMENT_YAML = fileURLToPath(new URL('../../../deploy/base/rbac-syncer/syncer-confinement.yaml', import.meta.url));
const ENTRY = join(repoRoot(), 'dist', 'apps', 'rbac-syncer', 'remove-bindings.js');
const SYNCED = { 'app.kubernetes.io/managed-by': 'outrigger-rbac-syncer' };
const HOOK = INSTALL_NAMES.uninstallHook;
const dir = mkdtempSync(join(tmpdir(), 'rbac-syncer-remove-'));
const { kubeconfigPath: adminConfig, binDir } = inject('controlPlane');

function kubectl(args: string[], input?: string, config = adminConfig): string {
  return execFileSync(join(binDir, 'kubectl'), ['--kubeconfig', config, ...args], { encoding: 'utf8', stdio: 'pipe', input });
}
const apply = (...objects: object[]) => kubectl(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects }));
const exists = (what: string, namespace?: string) => kubectl(['get', what, '--ignore-not-found', '-o', 'name', ...(namespace ? ['-n', namespace] : [])]).trim() !== '';

describe('the Helm pre-delete hook (remove-bindings.js)', () => {
  let ns: string;
  let hookConfig: string;
  const podLabels = { 'app.kubernetes.io/name': INSTALL_NAMES.rbacSyncer };

  beforeAll(async () => {
    const admin = kubeConfigFrom(adminConfig);
    ns = await createTestNamespace(admin, 'hook');
    kubectl(['apply', '-f', CONFINEMENT_YAML]);
    const permissions = uninstallHookPermissions(ns);
    const subjects = [{ kind: 'ServiceAccount', name: HOOK, namespace: ns }];
    const roleRef = (kind: string) => ({ apiGroup: 'rbac.authorization.k8s.io', kind, name: `${HOOK}-${ns}` });
    apply(
      { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: HOOK, namespace: ns } },
      { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: `${HOOK}-${ns}`, namespace: ns }, rules: rbacRules(permissions.filter((p) => p.namespace)) },
      { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: `${HOOK}-${ns}`, namespace: ns }, roleRef: roleRef('Role'), subjects },
      { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: `${HOOK}-${ns}` }, rules: rbacRules(permissions.filter((p) => !p.namespace)) },
      { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: `${HOOK}-${ns}` }, roleRef: roleRef('ClusterRole'), subjects },
      // The syncer's Deployment (no controller runs here: its pod is made by hand below).
      {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: INSTALL_NAMES.rbacSyncer, namespace: ns },
        spec: { replicas: 2, selector: { matchLabels: podLabels }, template: { metadata: { labels: podLabels }, spec: { containers: [{ name: 'rbac-syncer', image: 'localhost/outrigger/rbac-syncer:local' }] } } },
      },
      { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'syncer', namespace: ns, labels: podLabels }, spec: { containers: [{ name: 'rbac-syncer', image: 'localhost/outrigger/rbac-syncer:local' }] } },
      // What the syncer wrote, and what it did not.
      { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: `hook-e2e-agent-${ns}`, labels: SYNCED }, rules: [] },
      { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: `hook-e2e-agent.${ns}`, labels: SYNCED }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: `hook-e2e-agent-${ns}` }, subjects: [{ kind: 'ServiceAccount', name: 'default', namespace: ns }] },
      { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'hook-e2e-agent', namespace: ns, labels: SYNCED }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: `hook-e2e-agent-${ns}` }, subjects: [{ kind: 'ServiceAccount', name: 'default', namespace: ns }] },
      { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: `someone-elses-${ns}` }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' }, subjects: [{ kind: 'User', name: 'alice' }] },
    );
    hookConfig = await writeTokenKubeconfig(admin, join(dir, 'kubeconfig'), ns, HOOK);
    // The authorizer reads RBAC from a cache: wait until the hook's grants are in force.
    const canI = async (...args: string[]) => kubectl(['auth', 'can-i', ...args], undefined, hookConfig).trim();
    await eventually(() => canI('list', 'pods', '-n', ns).catch(() => 'no'), (a) => a === 'yes', 'the hook Role in force');
    await eventually(() => canI('delete', 'clusterroles').catch(() => 'no'), (a) => a === 'yes', 'the hook ClusterRole in force');
  });

  afterAll(() => {
    kubectl(['delete', '--ignore-not-found', '-f', CONFINEMENT_YAML]);
    kubectl(['delete', '--ignore-not-found', 'clusterrolebinding', `someone-elses-${ns}`, `${HOOK}-${ns}`, `hook-e2e-agent.${ns}`]);
    kubectl(['delete', '--ignore-not-found', 'clusterrole', `${HOOK}-${ns}`, `hook-e2e-agent-${ns}`]);
  });

  it("stops the syncer, deletes nothing while its pods run, then every object labelled as the syncer's and nothing else: roles, a wait, bindings", async () => {
    const child = spawn(process.execPath, [ENTRY], { env: { ...process.env, KUBECONFIG: hookConfig, POD_NAMESPACE: ns }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    await eventually(async () => output, (o) => o.includes('waiting for 1 rbac-syncer pod(s) to stop'), 'the hook to wait for the syncer pod', 60_000);
    expect(kubectl(['get', 'deployment', INSTALL_NAMES.rbacSyncer, '-n', ns, '-o', 'jsonpath={.spec.replicas}'])).toBe('0');
    expect(exists(`clusterrolebinding/hook-e2e-agent.${ns}`)).toBe(true);
    kubectl(['delete', 'pod', 'syncer', '-n', ns, '--grace-period=0', '--force']);
    // The roles go first; the bindings, the exec guard's parameters, only after the wait.
    await eventually(async () => exists(`clusterrole/hook-e2e-agent-${ns}`), (e) => !e, 'the role deleted');
    expect(exists(`clusterrolebinding/hook-e2e-agent.${ns}`)).toBe(true);
    expect(exists('rolebinding/hook-e2e-agent', ns)).toBe(true);
    expect(await exited, output).toBe(0);
    expect(output).toContain('waiting 5 s before deleting the bindings: the exec guard judges their ServiceAccounts until then');
    expect(output.indexOf(`deleted ClusterRole hook-e2e-agent-${ns}`)).toBeLessThan(output.indexOf('waiting 5 s'));
    expect(output.indexOf('waiting 5 s')).toBeLessThan(output.indexOf(`deleted ClusterRoleBinding hook-e2e-agent.${ns}`));
    expect(output).toContain(`deleted ClusterRoleBinding hook-e2e-agent.${ns}`);
    expect(exists(`clusterrolebinding/hook-e2e-agent.${ns}`)).toBe(false);
    expect(exists('rolebinding/hook-e2e-agent', ns)).toBe(false);
    expect(exists(`clusterrole/hook-e2e-agent-${ns}`)).toBe(false);
    expect(exists(`clusterrolebinding/someone-elses-${ns}`)).toBe(true);
    expect(kubectl(['get', 'clusterroles,clusterrolebindings,rolebindings', '-A', '-l', 'app.kubernetes.io/managed-by=outrigger-rbac-syncer', '-o', 'name']).trim()).toBe('');
  });

  it("its ServiceAccount may delete any ClusterRoleBinding by RBAC, but the confinement refuses one that is not the syncer's", async () => {
    const attempt = () => {
      try {
        return kubectl(['delete', '--dry-run=server', 'clusterrolebinding', `someone-elses-${ns}`], undefined, hookConfig);
      } catch (error) {
        return String((error as { stderr?: string }).stderr);
      }
    };
    expect(kubectl(['auth', 'can-i', 'delete', 'clusterrolebindings'], undefined, hookConfig).trim()).toBe('yes');
    await eventually(async () => attempt(), (out) => out.includes('outrigger rbac-syncer confinement:'), 'the confinement refusing the hook a binding that is not the syncer\'s');
    expect(exists(`clusterrolebinding/someone-elses-${ns}`)).toBe(true);
  });
});
