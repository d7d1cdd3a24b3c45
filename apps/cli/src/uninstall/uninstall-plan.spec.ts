import { describe, expect, it } from 'vitest';
import { describeRef, uninstallPlan, type InstalledObjects } from './uninstall-plan.js';

const ref = (kind: string, name: string, namespace?: string) => ({ apiVersion: 'v1', kind, name, ...(namespace ? { namespace } : {}) });

describe('uninstallPlan', () => {
  it('removes the webhook configuration first, stops the services before their bindings, the roles, a pause, the bindings, the guard after them, the namespace last', () => {
    const found: InstalledObjects = {
      namespace: 'outrigger-system',
      podSelector: 'app.kubernetes.io/part-of=outrigger',
      webhookConfigurations: [ref('MutatingWebhookConfiguration', 'outrigger-injector')],
      deployments: [ref('Deployment', 'outrigger-rbac-syncer', 'outrigger-system')],
      syncedRoles: [ref('ClusterRole', 'xxl-agent-exec')],
      syncedBindings: [ref('ClusterRoleBinding', 'xxl-agent-exec.team-a'), ref('RoleBinding', 'inventory', 'team-b')],
      authorizedToGuardMs: 25_000,
      admissionPolicies: [ref('ValidatingAdmissionPolicyBinding', 'outrigger-agent-exec-guard'), ref('ValidatingAdmissionPolicy', 'outrigger-agent-exec-guard')],
      crd: ref('CustomResourceDefinition', 'agentprofiles.outrigger.dev'),
      ownClusterObjects: [ref('ClusterRole', 'outrigger-rbac-syncer'), ref('PriorityClass', 'outrigger-critical')],
      installNamespace: ref('Namespace', 'outrigger-system'),
    };
    const order = uninstallPlan(found).flatMap((step) => (step.kind === 'delete' ? step.objects.map(describeRef) : step.kind === 'pause' ? [`pause ${step.ms}`] : [`wait ${step.labelSelector}`]));
    expect(order).toEqual([
      'MutatingWebhookConfiguration outrigger-injector',
      'Deployment outrigger-system/outrigger-rbac-syncer',
      'wait app.kubernetes.io/part-of=outrigger',
      'ClusterRole xxl-agent-exec',
      'pause 25000',
      'ClusterRoleBinding xxl-agent-exec.team-a',
      'RoleBinding team-b/inventory',
      'ValidatingAdmissionPolicyBinding outrigger-agent-exec-guard',
      'ValidatingAdmissionPolicy outrigger-agent-exec-guard',
      'CustomResourceDefinition agentprofiles.outrigger.dev',
      'ClusterRole outrigger-rbac-syncer',
      'PriorityClass outrigger-critical',
      'Namespace outrigger-system',
    ]);
  });

  it('is empty when nothing is installed', () => {
    const none: InstalledObjects = { namespace: 'x', podSelector: 's', webhookConfigurations: [], deployments: [], syncedRoles: [], syncedBindings: [], authorizedToGuardMs: 5_000, admissionPolicies: [], crd: undefined, ownClusterObjects: [], installNamespace: undefined };
    expect(uninstallPlan(none)).toEqual([]);
  });
});
