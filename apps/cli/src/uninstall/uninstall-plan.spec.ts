import { describe, expect, it } from 'vitest';
import { describeRef, uninstallPlan, type InstalledObjects } from './uninstall-plan.js';

const ref = (kind: string, name: string, namespace?: string) => ({ apiVersion: 'v1', kind, name, ...(namespace ? { namespace } : {}) });

describe('uninstallPlan', () => {
  it('removes the webhook configuration first, stops the services before their bindings, the guard after them, the namespace last', () => {
    const found: InstalledObjects = {
      namespace: 'outrigger-system',
      podSelector: 'app.kubernetes.io/part-of=outrigger',
      webhookConfigurations: [ref('MutatingWebhookConfiguration', 'outrigger-injector')],
      deployments: [ref('Deployment', 'outrigger-rbac-syncer', 'outrigger-system')],
      syncedRbac: [ref('ClusterRoleBinding', 'xxl-agent-exec'), ref('ClusterRole', 'xxl-agent-exec')],
      admissionPolicies: [ref('ValidatingAdmissionPolicyBinding', 'outrigger-agent-exec-guard'), ref('ValidatingAdmissionPolicy', 'outrigger-agent-exec-guard')],
      crd: ref('CustomResourceDefinition', 'agentprofiles.outrigger.dev'),
      ownClusterObjects: [ref('ClusterRole', 'outrigger-rbac-syncer'), ref('PriorityClass', 'outrigger-critical')],
      installNamespace: ref('Namespace', 'outrigger-system'),
    };
    const order = uninstallPlan(found).flatMap((step) => (step.kind === 'delete' ? step.objects.map(describeRef) : [`wait ${step.labelSelector}`]));
    expect(order).toEqual([
      'MutatingWebhookConfiguration outrigger-injector',
      'Deployment outrigger-system/outrigger-rbac-syncer',
      'wait app.kubernetes.io/part-of=outrigger',
      'ClusterRoleBinding xxl-agent-exec',
      'ClusterRole xxl-agent-exec',
      'ValidatingAdmissionPolicyBinding outrigger-agent-exec-guard',
      'ValidatingAdmissionPolicy outrigger-agent-exec-guard',
      'CustomResourceDefinition agentprofiles.outrigger.dev',
      'ClusterRole outrigger-rbac-syncer',
      'PriorityClass outrigger-critical',
      'Namespace outrigger-system',
    ]);
  });

  it('is empty when nothing is installed', () => {
    const none: InstalledObjects = { namespace: 'x', podSelector: 's', webhookConfigurations: [], deployments: [], syncedRbac: [], admissionPolicies: [], crd: undefined, ownClusterObjects: [], installNamespace: undefined };
    expect(uninstallPlan(none)).toEqual([]);
  });
});
