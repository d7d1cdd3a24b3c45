import { parseArgs } from 'node:util';
import { AGENT_PROFILE_GROUP, AGENT_PROFILE_PLURAL } from '@outrigger/agent-profiles';
import { findSyncedRbac, INSTALL_NAMES, readAuthorizedToGuardMs } from '@outrigger/install';
import { deleteObject, type KubeClient, kubeJson, type ObjectRef, readObject, resourcePath } from '@outrigger/kube';
import { PART_OF_OUTRIGGER } from './check/install-state.js';
import { type CommandIo, UsageError } from './command-io.js';
import { cliKubeClient } from './kube-client.js';
import { describeRef, type InstalledObjects, uninstallPlan } from './uninstall/uninstall-plan.js';

export const uninstallUsage = `usage: outrigger uninstall [--dry-run] [--kubeconfig FILE] [--namespace NS]
Removes what Outrigger and its rbac-syncer created: the webhook configuration first (pod creation
never breaks), the services, the agents' roles, then (after a pause while a request authorized
before may still reach the exec guard) their bindings, the exec guard, the AgentProfile CRD and
every AgentProfile, the services' RBAC and the install namespace. --dry-run lists them only.
Namespace labels (outrigger.dev/injection) are left as they are.`;

const POD_GONE_TIMEOUT_MS = 120_000;

export async function uninstallCommand(args: readonly string[], io: CommandIo): Promise<number> {
  const { values } = parseArgs({
    args: [...args],
    options: {
      kubeconfig: { type: 'string' },
      namespace: { type: 'string', short: 'n', default: INSTALL_NAMES.namespace },
      'dry-run': { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) return io.out(`${uninstallUsage}\n`), 0;
  const kc = cliKubeClient(values.kubeconfig);
  const plan = uninstallPlan(await findInstalled(kc, values.namespace));
  const dryRun = values['dry-run'] === true;
  for (const step of plan) {
    io.out(`${dryRun ? 'would remove' : 'removing'} ${step.why}\n`);
    if (step.kind === 'wait-for-pods-gone') {
      if (!dryRun) await waitForPodsGone(kc, step.namespace, step.labelSelector);
      continue;
    }
    if (step.kind === 'pause') {
      if (!dryRun) await new Promise((resolve) => setTimeout(resolve, step.ms));
      continue;
    }
    for (const ref of step.objects) {
      if (!dryRun) await deleteObject(kc, ref);
      io.out(`  ${dryRun ? '' : 'deleted '}${describeRef(ref)}\n`);
    }
  }
  if (plan.length === 0) io.out('nothing of Outrigger found\n');
  return 0;
}

async function findInstalled(kc: KubeClient, namespace: string): Promise<InstalledObjects> {
  const partOf = PART_OF_OUTRIGGER;
  const refs = async (apiVersion: string, kind: string, resource: string, labelSelector: string, inNamespace?: string): Promise<ObjectRef[]> => {
    const list = await kubeJson<{ items?: { metadata: { name: string; namespace?: string } }[] }>(kc, { path: resourcePath({ apiVersion, resource, namespace: inNamespace }), query: { labelSelector } });
    return (list.items ?? []).map(({ metadata }) => ({ apiVersion, kind, name: metadata.name, ...(metadata.namespace ? { namespace: metadata.namespace } : {}) }));
  };
  const rbac = 'rbac.authorization.k8s.io/v1';
  const admission = 'admissionregistration.k8s.io/v1';
  const crdRef = { apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', name: `${AGENT_PROFILE_PLURAL}.${AGENT_PROFILE_GROUP}` };
  const namespaceRef = { apiVersion: 'v1', kind: 'Namespace', name: namespace };
  const [webhooks, deployments, syncedRbac, authorizedToGuardMs, policyBindings, policies, ownCrbs, ownRoles, ownNamespacedRoles, ownRoleBindings, priorityClasses, crd, ns] = await Promise.all([
    refs(admission, 'MutatingWebhookConfiguration', 'mutatingwebhookconfigurations', partOf),
    refs('apps/v1', 'Deployment', 'deployments', partOf, namespace),
    findSyncedRbac(kc),
    readAuthorizedToGuardMs(kc),
    refs(admission, 'ValidatingAdmissionPolicyBinding', 'validatingadmissionpolicybindings', partOf),
    refs(admission, 'ValidatingAdmissionPolicy', 'validatingadmissionpolicies', partOf),
    refs(rbac, 'ClusterRoleBinding', 'clusterrolebindings', partOf),
    refs(rbac, 'ClusterRole', 'clusterroles', partOf),
    refs(rbac, 'Role', 'roles', partOf),
    refs(rbac, 'RoleBinding', 'rolebindings', partOf),
    refs('scheduling.k8s.io/v1', 'PriorityClass', 'priorityclasses', partOf),
    readObject(kc, crdRef),
    readObject(kc, namespaceRef),
  ]);
  return {
    namespace,
    podSelector: partOf,
    webhookConfigurations: webhooks,
    deployments,
    syncedRoles: syncedRbac.roles,
    syncedBindings: syncedRbac.bindings,
    authorizedToGuardMs,
    admissionPolicies: [...policyBindings, ...policies],
    crd: crd ? crdRef : undefined,
    // Those in the install namespace go with it.
    ownClusterObjects: [...ownCrbs, ...ownRoles, ...priorityClasses, ...[...ownRoleBindings, ...ownNamespacedRoles].filter((ref) => ref.namespace !== namespace)],
    installNamespace: ns?.metadata?.labels?.['app.kubernetes.io/part-of'] === 'outrigger' ? namespaceRef : undefined,
  };
}

async function waitForPodsGone(kc: KubeClient, namespace: string, labelSelector: string): Promise<void> {
  const deadline = Date.now() + POD_GONE_TIMEOUT_MS;
  for (;;) {
    const pods = await kubeJson<{ items?: unknown[] }>(kc, { path: resourcePath({ apiVersion: 'v1', resource: 'pods', namespace }), query: { labelSelector } });
    if ((pods.items ?? []).length === 0) return;
    if (Date.now() > deadline) throw new UsageError(`Outrigger's pods in ${namespace} are still there after ${POD_GONE_TIMEOUT_MS / 1000} s; nothing else was removed yet: run uninstall again`);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
  }
}
