import type { PodSecurityLevel } from '@outrigger/agent-profiles';
import type { HeldNamespace, NamespacesHeld } from '@outrigger/admission';
import type { GuardBindingView, GuardPolicyView } from '@outrigger/install';
import type { AgentScan } from '../agents/agent-scan.reader.js';
import type { InstallIdentity } from '../install-identity.js';
import type { ParsedCertificate } from '@outrigger/pki';

/** The label selector of every object of an Outrigger install. */
export const PART_OF_OUTRIGGER = 'app.kubernetes.io/part-of=outrigger';

/** What `outrigger check` reads from the cluster, parsed once (install-state.reader.ts). */
export interface InstallState {
  readonly namespace: string;
  readonly now: Date;
  /** This CLI's version, which the services' are compared with. */
  readonly cliVersion: string;
  /** The API server's version, e.g. `v1.36.0`; undefined when /version cannot be read. */
  readonly serverVersion: string | undefined;
  /** The AgentProfile CRD: undefined when absent. */
  readonly crd: { readonly established: boolean } | undefined;
  readonly webhook: WebhookView | undefined;
  readonly deployments: readonly DeploymentView[];
  /** Which installation the Deployments belong to; undefined when none is found or they differ (restore says which). */
  readonly install: InstallIdentity | undefined;
  /** Each service's ServiceAccount against the API requests that service makes (SubjectAccessReviews). */
  readonly serviceAccess: readonly ServiceAccessView[];
  /** Each injector pod's /readyz, read through the API server's pod proxy: what it serves, not the Secret (whose key check never reads). */
  readonly injectorReplicas: readonly InjectorReplicaView[];
  readonly leases: readonly LeaseView[];
  readonly profiles: readonly ProfileView[];
  /** The namespaces labelled for injection, at their resourceVersions (what the injector's and the rbac-syncer's digests are taken over). */
  readonly labelledNamespaces: readonly HeldNamespace[];
  /** The rbac-syncer's exec guard of ClusterRoleBinding profiles (ValidatingAdmissionPolicy and binding from deploy/). */
  readonly execGuard: ExecGuardView;
  /** Its exec guard of RoleBinding profiles, likewise. */
  readonly namespacedExecGuard: ExecGuardView;
  /** The policy that confines the rbac-syncer's own writes to its own bindings (deploy/base/rbac-syncer/syncer-confinement.yaml). */
  readonly syncerConfinement: AdmissionPolicyView;
  /** The policy that keeps the cert-manager's patch of the webhook configuration to its caBundles (deploy/base/cert-manager/cert-manager-confinement.yaml). */
  readonly certManagerConfinement: AdmissionPolicyView;
  /** The policy refusing agent-named containers in pods the webhook skips (deploy/base/webhook/forged-agent.yaml). */
  readonly forgedAgent: AdmissionPolicyView;
  /** What Kubernetes' own type check says of each shipped ValidatingAdmissionPolicy that exists. */
  readonly policyTypes: readonly PolicyTypesView[];
  /** Every live opted-in pod's agent, per workload (what `outrigger agents -A` shows); undefined when it cannot be read (a read error). */
  readonly agents: AgentScan | undefined;
  /** What could not be read, e.g. `Leases in outrigger-system: 403 Forbidden`: each is a failed line. */
  readonly readErrors: readonly string[];
}

export interface WebhookView {
  readonly name: string;
  /** The PEM bundle, decoded; '' when unset. */
  readonly caBundle: string;
  readonly service: { readonly namespace: string; readonly name: string; readonly port: number } | undefined;
  readonly serviceExists: boolean;
  /** Ready endpoints of that Service (EndpointSlices). */
  readonly readyEndpoints: number;
}

export interface DeploymentView {
  readonly name: string;
  readonly desired: number;
  readonly available: number;
}

export interface ServiceAccessView {
  readonly deployment: string;
  /** `injector`, `rbac-syncer` or `cert-manager`: its base in deploy/base holds its RBAC. */
  readonly component: string;
  readonly serviceAccount: string;
  /** How many requests were reviewed. */
  readonly reviewed: number;
  /** Those it needs and may not make, described (`create secrets in namespace x`). */
  readonly missing: readonly string[];
}

export interface InjectorReplicaView {
  readonly pod: string;
  readonly ready: boolean;
  /** The certificate it serves (the first of the chain it reports), read from its PEM. */
  readonly certificate?: ParsedCertificate;
  /** Why what it serves is not its source's latest pair (refused, or the Secret gone): it keeps serving its last good one. */
  readonly stale?: string;
  /** AgentProfile generation in force, by name. */
  readonly generations?: Readonly<Record<string, number>>;
  /** The labelled namespaces it holds: how many, and their digest (`namespacesDigest`); absent when it reads none (PROFILES_FILE). */
  readonly namespaces?: NamespacesHeld;
  /** The version it stamps on pods; absent from an injector that does not report it. */
  readonly version?: string;
  /** Why its /readyz could not be read, or why it is not ready. */
  readonly problem?: string;
}

export interface LeaseView {
  readonly name: string;
  readonly holder?: string;
  readonly renewTime?: Date;
  readonly durationSeconds?: number;
  /** The labelled namespaces its holder acts on, as the rbac-syncer's leader publishes them on its Lease. */
  readonly namespaces?: NamespacesHeld;
  /** The version its holder stamped (`holderVersionFrom`); absent when the holder stamps none. */
  readonly version?: string;
}

export interface ConditionView {
  readonly status: string;
  readonly reason: string;
  readonly message: string;
}

export interface ProfileView {
  readonly name: string;
  readonly generation: number;
  readonly observedGeneration?: number;
  readonly bindingKind?: string;
  readonly accepted?: ConditionView;
  readonly synced?: ConditionView;
  /** Why this version's profile schema refuses the spec (the Pod Security floor among its rules), whatever the status says. */
  readonly refusal?: string;
  /** The Pod Security level the profile's agent meets, when the spec is valid. */
  readonly podSecurity?: PodSecurityLevel;
}

/** An exec guard by the name the rbac-syncer judges, read as it judges it (libs/install exec-guard-state). */
export interface ExecGuardView {
  readonly name: string;
  readonly policy: GuardPolicyView | undefined;
  readonly binding: GuardBindingView | undefined;
}

/** A ValidatingAdmissionPolicy and its binding, by name: present or not, and the binding's actions. */
export interface AdmissionPolicyView {
  readonly policies: readonly string[];
  readonly bindings: readonly { readonly name: string; readonly actions: readonly string[] }[];
}

/**
 * A policy's `status.typeChecking`, which kube-controller-manager writes for each generation: its
 * validations and messages typed against the kinds its rules name exactly.
 */
export interface PolicyTypesView {
  readonly name: string;
  /** The deploy/base file that ships it. */
  readonly file: string;
  /** False where Kubernetes types nothing of it: each of its rules names a wildcard or a subresource. */
  readonly typed: boolean;
  /** Undefined until Kubernetes has typed the policy's current generation. */
  readonly warnings: readonly { readonly fieldRef: string; readonly warning: string }[] | undefined;
}
