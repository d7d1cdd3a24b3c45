import { beforeAll, describe, expect, it } from 'vitest';
import { applyFixture, boundServiceAccounts, createNamespace, eventually, kubectl, outrigger, type PodJson } from './support.ts';

// Runs last (see vitest.e2e.config.ts): it removes Outrigger from the suite's cluster.
describe('outrigger uninstall', () => {
  // Its own agent, so the syncer's binding exists whichever files ran before.
  let tenant: string;
  beforeAll(async () => {
    tenant = createNamespace('before-uninstall');
    applyFixture('deployment.yaml', tenant);
    kubectl(['rollout', 'status', 'deployment/billing', '-n', tenant, '--timeout=180s']);
    await eventually(() => expect(boundServiceAccounts()).toContain(`${tenant}/default`), 'the tenant ServiceAccount bound');
  });

  it('--dry-run lists what it would remove and removes nothing', () => {
    const result = outrigger(['uninstall', '--dry-run']);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^would remove the webhook configuration.*\n {2}MutatingWebhookConfiguration outrigger-injector$/m);
    expect(result.stdout).toMatch(new RegExp(`^ {2}ClusterRoleBinding xxl-agent-exec\\.${tenant}$`, 'm'));
    expect(result.stdout).toContain('  ValidatingAdmissionPolicy outrigger-agent-exec-guard');
    expect(kubectl(['get', 'mutatingwebhookconfigurations', '-o', 'name'])).toContain('outrigger-injector');
  });

  it('leaves no Outrigger object behind, and pods in formerly labelled namespaces are created as before', async () => {
    const formerTenant = createNamespace('after-uninstall');
    const result = outrigger(['uninstall']);
    expect(result.code, result.stderr).toBe(0);
    const left = (kinds: string, selector: string) => kubectl(['get', kinds, '-A', '-l', selector, '-o', 'name']).trim();
    expect(left('mutatingwebhookconfigurations,validatingadmissionpolicies,validatingadmissionpolicybindings,clusterroles,clusterrolebindings,priorityclasses', 'app.kubernetes.io/part-of=outrigger')).toBe('');
    expect(left('clusterroles,clusterrolebindings,rolebindings', 'app.kubernetes.io/managed-by=outrigger-rbac-syncer')).toBe('');
    expect(kubectl(['get', 'customresourcedefinitions', '-o', 'name'])).not.toContain('agentprofiles.outrigger.dev');
    await eventually(() => expect(kubectl(['get', 'namespaces', '-o', 'name'])).not.toContain('namespace/outrigger-system'), 'the install namespace to be gone');
    // Its own Roles and RoleBindings went with it; those elsewhere (the cert-manager's in default) by name.
    expect(left('roles,rolebindings', 'app.kubernetes.io/part-of=outrigger')).toBe('');

    const pod = JSON.parse(
      kubectl(['run', 'plain', '-n', formerTenant, '--image=localhost/busybox:local', '--restart=Never', '--dry-run=server', '-o', 'json', '--annotations=xxl-agent/enable=true', '--', 'sleep', '1']),
    ) as PodJson;
    expect(pod.spec.containers.map((c) => c.name)).toEqual(['plain']);

    const again = outrigger(['uninstall']);
    expect(again).toMatchObject({ code: 0, stdout: 'nothing of Outrigger found\n' });
  });
});
