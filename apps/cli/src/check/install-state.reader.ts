import { AGENT_PROFILE_API_VERSION, AGENT_PROFILE_GROUP, AGENT_PROFILE_PLURAL, agentPodSecurityLevel, parseAgentProfile } from '@outrigger/agent-profiles';
import { INJECTION_LABEL_KEY, INJECTION_LABEL_VALUE, type NamespacesHeld, namespacesHeldFrom } from '@outrigger/admission';
import { CERT_MANAGER_CONFINEMENT_NAME, certManagerPermissions, execGuardName, FORGED_AGENT_POLICY_NAME, holderVersionFrom, injectorPermissions, INSTALL_NAMES, projectGuardBinding, projectGuardPolicy, rbacSyncerBasePermissions, shippedPolicies, SYNCER_CONFINEMENT_NAME } from '@outrigger/install';
import { describePermission, isNotFound, type KubeClient, kubeJson, missingPermissions, type RequiredPermission, resourcePath } from '@outrigger/kube';
import { parseCertificate } from '@outrigger/pki';
import { scanAgents } from '../agents/agent-scan.reader.js';
import { CLI_VERSION } from '../cli-version.js';
import { policyTypesView } from './policy-types.js';
import { type InstallIdentity, installIdentity } from '../install-identity.js';
import { type AdmissionPolicyView, type ConditionView, type DeploymentView, type ExecGuardView, type InjectorReplicaView, type InstallState, type LeaseView, PART_OF_OUTRIGGER, type ProfileView, type ServiceAccessView, type WebhookView } from './install-state.js';

const READ_TIMEOUT_MS = 15_000;

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- API objects read field by field below

/** Reads everything `outrigger check` judges; what cannot be read is named in readErrors, never thrown. */
export async function readInstallState(kc: KubeClient, options: { readonly namespace: string; readonly webhookName: string }): Promise<InstallState> {
  const { namespace } = options;
  const readErrors: string[] = [];
  const read = async <T>(what: string, path: string, query?: Record<string, string>): Promise<T | undefined> => {
    try {
      return await kubeJson<T>(kc, { path, query, timeoutMs: READ_TIMEOUT_MS });
    } catch (error) {
      if (!isNotFound(error)) readErrors.push(`${what}: ${error instanceof Error ? error.message : String(error)}`);
      return undefined;
    }
  };
  const list = async (what: string, path: string, labelSelector?: string): Promise<Json[]> => (await read<{ items: Json[] }>(what, path, labelSelector ? { labelSelector } : undefined))?.items ?? [];

  const [version, crdObj, webhookObj, deploymentObjs, injectorPods, leaseObjs, profileObjs, namespaceObjs] = await Promise.all([
    read<{ gitVersion?: string }>("the API server's version", '/version'),
    read<Json>('the AgentProfile CRD', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${AGENT_PROFILE_PLURAL}.${AGENT_PROFILE_GROUP}`),
    read<Json>(`MutatingWebhookConfiguration ${options.webhookName}`, resourcePath({ apiVersion: 'admissionregistration.k8s.io/v1', resource: 'mutatingwebhookconfigurations', name: options.webhookName })),
    list(`Deployments in ${namespace}`, resourcePath({ apiVersion: 'apps/v1', resource: 'deployments', namespace }), PART_OF_OUTRIGGER),
    list(`injector pods in ${namespace}`, resourcePath({ apiVersion: 'v1', resource: 'pods', namespace }), `${PART_OF_OUTRIGGER},app.kubernetes.io/component=injector`),
    list(`Leases in ${namespace}`, resourcePath({ apiVersion: 'coordination.k8s.io/v1', resource: 'leases', namespace })),
    list('AgentProfiles', resourcePath({ apiVersion: AGENT_PROFILE_API_VERSION, resource: AGENT_PROFILE_PLURAL })),
    list('labelled Namespaces', resourcePath({ apiVersion: 'v1', resource: 'namespaces' }), `${INJECTION_LABEL_KEY}=${INJECTION_LABEL_VALUE}`),
  ]);
  // By name, as the rbac-syncer judges it (its EXEC_GUARD_NAME): the syncer's other admission policies carry the same labels.
  const guardName = envOf(deploymentObjs.find((d) => componentOf(d) === 'rbac-syncer')).get('EXEC_GUARD_NAME') ?? INSTALL_NAMES.execGuard;
  const admission = admissionReader(read);
  const [execGuard, namespacedExecGuard, syncerConfinement, certManagerConfinement, forgedAgent, policyTypes] = await Promise.all([
    execGuardView(admission, execGuardName('ClusterRoleBinding', guardName)),
    execGuardView(admission, execGuardName('RoleBinding', guardName)),
    admissionPolicy(admission, SYNCER_CONFINEMENT_NAME),
    admissionPolicy(admission, CERT_MANAGER_CONFINEMENT_NAME),
    admissionPolicy(admission, FORGED_AGENT_POLICY_NAME),
    Promise.all(shippedPolicies(guardName).map(async ({ name, file }) => policyTypesView(name, file, await admission('validatingadmissionpolicies', name)))),
  ]);

  const webhook = webhookObj ? await webhookView(webhookObj, read, list) : undefined;
  const serviceAccess = (
    await Promise.all(
      deploymentObjs.map(async (d): Promise<ServiceAccessView | undefined> => {
        const access = serviceAccessOf(d, namespace);
        if (!access) return undefined;
        try {
          const missing = await missingPermissions(kc, access.required, { namespace, name: access.serviceAccount });
          return { deployment: String(d.metadata?.name), component: access.component, serviceAccount: access.serviceAccount, reviewed: access.required.length, missing: missing.map(describePermission) };
        } catch (error) {
          readErrors.push(`SubjectAccessReviews for ServiceAccount ${namespace}/${access.serviceAccount}: ${error instanceof Error ? error.message : String(error)}`);
          return undefined;
        }
      }),
    )
  ).filter((v) => v !== undefined);
  const agents = await scanAgents(kc, { namespace: undefined, profile: undefined, installNamespace: namespace }).catch((error: unknown) => {
    // Without the CRD there is nothing to judge pods by: the crd line says so.
    if (!isNotFound(error)) readErrors.push(`opted-in pods: ${error instanceof Error ? error.message : String(error)}`);
    return undefined;
  });
  const running = (pods: readonly Json[]) => pods.filter((p) => p.status?.phase === 'Running' && !p.metadata?.deletionTimestamp);
  const injectorReplicas = await Promise.all(running(injectorPods).map((p) => replicaView(kc, namespace, p)));

  return {
    namespace,
    now: new Date(),
    cliVersion: CLI_VERSION,
    serverVersion: version?.gitVersion,
    crd: crdObj ? { established: conditionsOf(crdObj).some((c) => c.type === 'Established' && c.status === 'True') } : undefined,
    webhook,
    deployments: deploymentObjs.map(deploymentView),
    install: knownInstall(deploymentObjs, namespace),
    serviceAccess,
    injectorReplicas,
    leases: leaseObjs.map(leaseView),
    profiles: profileObjs.map(profileView),
    labelledNamespaces: namespaceObjs.map((n) => ({ name: String(n.metadata?.name), resourceVersion: String(n.metadata?.resourceVersion ?? '') })),
    execGuard,
    namespacedExecGuard,
    syncerConfinement,
    certManagerConfinement,
    forgedAgent,
    policyTypes: policyTypes.filter((p) => p !== undefined),
    agents,
    readErrors,
  };
}

function knownInstall(deployments: readonly Json[], namespace: string): InstallIdentity | undefined {
  try {
    return installIdentity(deployments, namespace);
  } catch {
    return undefined; // the deployments line names a missing install; restore names differing ones
  }
}

type AdmissionResource = 'validatingadmissionpolicies' | 'validatingadmissionpolicybindings';
type AdmissionReader = (resource: AdmissionResource, name: string) => Promise<Json | undefined>;

/** Reads each admission policy or binding once, however many views are built from it. */
function admissionReader(read: <T>(what: string, path: string) => Promise<T | undefined>): AdmissionReader {
  const reads = new Map<string, Promise<Json | undefined>>();
  return (resource, name) => {
    const key = `${resource}/${name}`;
    if (!reads.has(key)) reads.set(key, read<Json>(`${resource} ${name}`, resourcePath({ apiVersion: 'admissionregistration.k8s.io/v1', resource, name })));
    return reads.get(key) as Promise<Json | undefined>;
  };
}

/** A ValidatingAdmissionPolicy and its binding of the same name, as check judges them. */
async function execGuardView(get: AdmissionReader, name: string): Promise<ExecGuardView> {
  const [policy, binding] = await Promise.all([get('validatingadmissionpolicies', name), get('validatingadmissionpolicybindings', name)]);
  return { name, policy: policy && projectGuardPolicy(policy), binding: binding && projectGuardBinding(binding) };
}

async function admissionPolicy(get: AdmissionReader, name: string): Promise<AdmissionPolicyView> {
  const [policy, binding] = await Promise.all([get('validatingadmissionpolicies', name), get('validatingadmissionpolicybindings', name)]);
  return {
    policies: policy ? [name] : [],
    bindings: binding ? [{ name, actions: Array.isArray(binding.spec?.validationActions) ? binding.spec.validationActions.map(String) : [] }] : [],
  };
}

async function webhookView(
  obj: Json,
  read: <T>(what: string, path: string, query?: Record<string, string>) => Promise<T | undefined>,
  list: (what: string, path: string, labelSelector?: string) => Promise<Json[]>,
): Promise<WebhookView> {
  const first = Array.isArray(obj.webhooks) ? obj.webhooks[0] : undefined;
  const svc = first?.clientConfig?.service;
  const service = svc ? { namespace: String(svc.namespace), name: String(svc.name), port: Number(svc.port ?? 443) } : undefined;
  const caBundle = typeof first?.clientConfig?.caBundle === 'string' ? Buffer.from(first.clientConfig.caBundle, 'base64').toString('utf8') : '';
  if (!service) return { name: String(obj.metadata?.name), caBundle, service, serviceExists: false, readyEndpoints: 0 };
  const [serviceObj, slices] = await Promise.all([
    read<Json>(`Service ${service.namespace}/${service.name}`, resourcePath({ apiVersion: 'v1', resource: 'services', namespace: service.namespace, name: service.name })),
    list(`EndpointSlices of ${service.name}`, resourcePath({ apiVersion: 'discovery.k8s.io/v1', resource: 'endpointslices', namespace: service.namespace }), `kubernetes.io/service-name=${service.name}`),
  ]);
  const readyEndpoints = slices.flatMap((s) => (Array.isArray(s.endpoints) ? s.endpoints : [])).filter((e: Json) => e.conditions?.ready !== false).length;
  return { name: String(obj.metadata?.name), caBundle, service, serviceExists: serviceObj !== undefined, readyEndpoints };
}

/**
 * The requests a Deployment's service makes, from its component label and the names its env gives
 * (each service's own default where the env says nothing).
 */
function serviceAccessOf(deployment: Json, namespace: string): { component: string; serviceAccount: string; required: RequiredPermission[] } | undefined {
  const component = componentOf(deployment);
  const env = envOf(deployment);
  const serviceAccount = String(deployment.spec?.template?.spec?.serviceAccountName ?? 'default');
  const profilesFromApi = !env.has('PROFILES_FILE');
  const lease = { namespace: env.get('LEASE_NAMESPACE') ?? namespace, name: env.get('LEASE_NAME') ?? `outrigger-${component}` };
  switch (component) {
    case 'injector': {
      // TLS_SECRET is `name` (in its own namespace) or `namespace/name`.
      const tlsSecret = env.get('TLS_SECRET')?.split('/');
      const servingSecret = tlsSecret ? { namespace: tlsSecret.length > 1 ? (tlsSecret[0] ?? namespace) : namespace, name: tlsSecret.at(-1) ?? '' } : undefined;
      return { component, serviceAccount, required: injectorPermissions({ ...(servingSecret ? { servingSecret } : {}), profilesFromApi }) };
    }
    case 'cert-manager': {
      const secrets = [env.get('CA_SECRET_NAME') ?? INSTALL_NAMES.caSecret, env.get('SERVING_SECRET_NAME') ?? INSTALL_NAMES.servingSecret];
      const webhooks = (env.get('WEBHOOK_NAMES') ?? '').split(',').map((w) => w.trim()).filter(Boolean);
      return { component, serviceAccount, required: certManagerPermissions({ namespace, secrets, webhooks, lease }) };
    }
    case 'rbac-syncer':
      // What each profile needs on top, the syncer reviews itself and reports in the profile's Synced condition.
      return { component, serviceAccount, required: rbacSyncerBasePermissions(lease, profilesFromApi) };
    default:
      return undefined;
  }
}

/** The service a Deployment runs: its pods' `app.kubernetes.io/component`. */
function componentOf(deployment: Json | undefined): string {
  return String(deployment?.spec?.template?.metadata?.labels?.['app.kubernetes.io/component'] ?? '');
}

/** The literal env values of a Deployment's container (settings from the downward API are left out). */
function envOf(deployment: Json | undefined): Map<string, string> {
  const env = (deployment?.spec?.template?.spec?.containers?.[0]?.env as Json[] | undefined) ?? [];
  return new Map(env.filter((e) => typeof e.value === 'string').map((e) => [String(e.name), String(e.value)]));
}

/** A pod's /readyz through the API server's pod proxy (`port`: `https:<pod>:<port>`): whether it is ready, and its checks' details. */
async function readyzOf(kc: KubeClient, namespace: string, port: string): Promise<{ ready: boolean; details: Json | undefined; body: Json }> {
  const response = await kc.request({ path: `/api/v1/namespaces/${namespace}/pods/${port}/proxy/readyz`, timeoutMs: READ_TIMEOUT_MS });
  const body = JSON.parse(await response.body.text()) as Json;
  return { ready: response.status === 200, details: body.details, body };
}

/** The labelled namespaces a replica's /readyz says it holds, if it says. */
function heldNamespaces(namespaces: Json | undefined): { namespaces?: NamespacesHeld } {
  return typeof namespaces?.digest === 'string' && typeof namespaces.held === 'number' ? { namespaces: { held: namespaces.held, digest: namespaces.digest } } : {};
}

const containerPort = (pod: Json, name: string, fallback: number): number => (pod.spec?.containers?.[0]?.ports as Json[] | undefined)?.find((p) => p.name === name)?.containerPort ?? fallback;
const unreadable = (error: unknown) => `its /readyz cannot be read through the API server (${error instanceof Error ? error.message : String(error)})`;

/** One injector pod's /readyz (the webhook's own port, HTTPS). */
async function replicaView(kc: KubeClient, namespace: string, pod: Json): Promise<InjectorReplicaView> {
  const name = String(pod.metadata?.name);
  try {
    const { ready, details, body } = await readyzOf(kc, namespace, `https:${name}:${containerPort(pod, 'https', 8443)}`);
    const served = details?.certificate;
    const certificate = typeof served?.pem === 'string' ? parseCertificate(served.pem) : undefined;
    const profiles = details?.profiles;
    return {
      pod: name,
      ready,
      ...(certificate ? { certificate } : {}),
      ...(typeof served?.stale === 'string' ? { stale: served.stale } : {}),
      ...(profiles?.generations && typeof profiles.generations === 'object' ? { generations: profiles.generations as Record<string, number> } : {}),
      ...heldNamespaces(details?.namespaces),
      ...(typeof profiles?.version === 'string' ? { version: profiles.version } : {}),
      ...(ready ? {} : { problem: `not ready: ${JSON.stringify(details ?? body)}` }),
    };
  } catch (error) {
    return { pod: name, ready: false, problem: unreadable(error) };
  }
}

function deploymentView(obj: Json): DeploymentView {
  return { name: String(obj.metadata?.name), desired: Number(obj.spec?.replicas ?? 1), available: Number(obj.status?.availableReplicas ?? 0) };
}

function leaseView(obj: Json): LeaseView {
  const spec = obj.spec ?? {};
  const held = namespacesHeldFrom(obj.metadata?.annotations);
  const version = holderVersionFrom(obj.metadata?.annotations, spec.holderIdentity);
  return {
    name: String(obj.metadata?.name),
    ...(spec.holderIdentity ? { holder: String(spec.holderIdentity) } : {}),
    ...(spec.renewTime ? { renewTime: new Date(spec.renewTime) } : {}),
    ...(typeof spec.leaseDurationSeconds === 'number' ? { durationSeconds: spec.leaseDurationSeconds } : {}),
    ...(held ? { namespaces: held } : {}),
    ...(version ? { version } : {}),
  };
}

function profileView(obj: Json): ProfileView {
  const condition = (type: string): ConditionView | undefined => {
    const c = conditionsOf(obj).find((x) => x.type === type);
    return c ? { status: String(c.status), reason: String(c.reason ?? ''), message: String(c.message ?? '') } : undefined;
  };
  const accepted = condition('Accepted');
  const synced = condition('Synced');
  // Judged here too: a status written by an older rbac-syncer can still say Accepted.
  const parsed = parseAgentProfile(obj);
  return {
    name: String(obj.metadata?.name),
    generation: Number(obj.metadata?.generation ?? 0),
    ...(typeof obj.status?.observedGeneration === 'number' ? { observedGeneration: obj.status.observedGeneration } : {}),
    ...(obj.spec?.rbac?.binding?.kind ? { bindingKind: String(obj.spec.rbac.binding.kind) } : {}),
    ...(accepted ? { accepted } : {}),
    ...(synced ? { synced } : {}),
    ...(parsed.ok ? { podSecurity: agentPodSecurityLevel(parsed.value) } : { refusal: parsed.error.split('\n').join('; ') }),
  };
}

function conditionsOf(obj: Json): Json[] {
  return Array.isArray(obj.status?.conditions) ? obj.status.conditions : [];
}
