import type { RbacBindingKind } from '@outrigger/agent-profiles';
import { namespacesDigest, type NamespacesHeld } from '@outrigger/admission';
import { CERT_MANAGER_CONFINEMENT_FILE, execGuardRemedy, execGuardShortfalls, FORGED_AGENT_POLICY_FILE, INJECTOR_SERVICE_FILE, INSTALL_NAMES, MINIMUM_KUBERNETES, SERVICE_RBAC_FILES, type ServiceComponent, SYNCER_CONFINEMENT_FILE } from '@outrigger/install';
import { identityPod } from '@outrigger/kube';
import { type ParsedCertificate, verifiesAgainst } from '@outrigger/pki';
import semver from 'semver';
import { workloadName } from '../agents/workload-owner.js';
import { helmRepair, type InstallIdentity } from '../install-identity.js';
import { type AdmissionPolicyView, type InstallState, type LeaseView, PART_OF_OUTRIGGER } from './install-state.js';

/** One line of `outrigger check`: fail makes the exit code non-zero, warn does not. */
export interface CheckLine {
  readonly check: string;
  readonly result: 'pass' | 'warn' | 'fail';
  readonly message: string;
  /** What to look at or do, for a failed or warned line. */
  readonly hint?: string;
  /**
   * A command that repairs it and touches nothing else: it creates only what is missing (`outrigger
   * restore`, never an apply of a base over the user's overlay) or puts back exactly what was changed.
   */
  readonly fix?: string;
}

/** Re-creating from the user's own overlay, for what check cannot name a file for. */
const FROM_YOUR_OVERLAY = 'kubectl kustomize deploy/overlays/<yours> | outrigger restore -f -';

const DAY_MS = 24 * 3_600_000;

/** Every condition Outrigger needs, judged from what was read: one line each. */
export function checkLines(state: InstallState): CheckLine[] {
  const unread = state.readErrors.map((e) => fail('read', `cannot read ${e}`, 'check your kubeconfig context and that you may read Outrigger objects (cluster-admin or a read-only role)'));
  return [...unread, kubernetesVersion(state), crd(state), webhook(state), injectorEndpoints(state), ...deployments(state), ...serviceAccess(state), caBundle(state), served(state), expiry(state), ...leases(state), versions(state), ...profiles(state), namespaces(state), execGuard(state, 'ClusterRoleBinding'), execGuard(state, 'RoleBinding'), syncerConfinement(state), certManagerConfinement(state), forgedAgent(state), policyTypes(state), ...agents(state)];
}

const pass = (check: string, message: string): CheckLine => ({ check, result: 'pass', message });
const fail = (check: string, message: string, hint: string, fix?: string): CheckLine => ({ check, result: 'fail', message, hint, ...(fix ? { fix } : {}) });
const warn = (check: string, message: string, hint: string): CheckLine => ({ check, result: 'warn', message, hint });

/**
 * A failure repaired by creating Outrigger's objects, or by replacing the `changed` ones (kubectl's
 * `kind name`). On a Helm install by Helm instead, as restore refuses there: objects made by hand
 * lack the release's ownership, so helm uninstall would leave them and helm upgrade conflict on them.
 */
function repair(install: InstallIdentity | undefined, line: { check: string; message: string; hint: string; fix?: string | undefined; changed?: string | undefined }): CheckLine {
  if (install?.by !== 'helm') return fail(line.check, line.message, line.hint, line.fix);
  // Deleted first: Helm's apply would keep list items added by hand beside its own (Warn beside Deny is invalid).
  const first = line.changed ? `kubectl delete ${line.changed}, then ` : '';
  return fail(line.check, line.message, `Helm installed Outrigger: let Helm put back what of its release is missing or changed: ${first}${helmRepair(install)}; add --force-conflicts where it reports a conflict with a field changed by hand`);
}

function kubernetesVersion({ serverVersion }: InstallState): CheckLine {
  const minimum = `${MINIMUM_KUBERNETES.major}.${MINIMUM_KUBERNETES.minor}`;
  const match = /^v?(\d+)\.(\d+)/.exec(serverVersion ?? '');
  if (!match) return fail('kubernetes-version', `cannot tell the API server's version (${serverVersion ?? 'unreadable'})`, 'kubectl version');
  const [major, minor] = [Number(match[1]), Number(match[2])];
  if (major < MINIMUM_KUBERNETES.major || (major === MINIMUM_KUBERNETES.major && minor < MINIMUM_KUBERNETES.minor)) {
    return fail('kubernetes-version', `the API server is ${serverVersion}; Outrigger needs ${minimum} or newer`, 'upgrade the cluster; older ones lack ValidatingAdmissionPolicy v1 and webhook matchConditions');
  }
  return pass('kubernetes-version', `${serverVersion} (${minimum} or newer needed)`);
}

function crd({ crd }: InstallState): CheckLine {
  if (!crd) return fail('crd', 'CustomResourceDefinition agentprofiles.outrigger.dev is missing', 'the CRD is the same in every overlay', 'kubectl apply --server-side -k deploy/base/crd');
  if (!crd.established) return fail('crd', 'agentprofiles.outrigger.dev is not Established', 'kubectl describe crd agentprofiles.outrigger.dev');
  return pass('crd', 'agentprofiles.outrigger.dev is Established');
}

function webhook({ webhook, install }: InstallState): CheckLine {
  if (!webhook) return repair(install, { check: 'webhook', message: `MutatingWebhookConfiguration ${INSTALL_NAMES.webhook} is missing: pods are not injected`, hint: `re-create it from the overlay you installed (overlays change it), creating nothing else: ${FROM_YOUR_OVERLAY}` });
  if (!webhook.service) return fail('webhook', `${webhook.name} does not point at a Service`, 'its clientConfig must name the injector Service');
  const svc = `${webhook.service.namespace}/${webhook.service.name}`;
  if (!webhook.serviceExists) {
    const fix = `outrigger restore -f ${INJECTOR_SERVICE_FILE}${namespaceFlag(webhook.service.namespace)}`;
    return repair(install, { check: 'webhook', message: `${webhook.name} points at Service ${svc}, which does not exist`, hint: 'creates the Service as deploy/base/injector has it, nothing else', fix });
  }
  return pass('webhook', `${webhook.name} points at Service ${svc}:${webhook.service.port}`);
}

function injectorEndpoints({ webhook }: InstallState): CheckLine {
  if (!webhook?.service || !webhook.serviceExists) return fail('injector-endpoints', 'no injector Service to look at', 'see the webhook line');
  if (webhook.readyEndpoints === 0) {
    return fail('injector-endpoints', `Service ${webhook.service.name} has no ready endpoint: with failurePolicy Fail, pods in labelled namespaces cannot be created`, `kubectl -n ${webhook.service.namespace} get pods -l app.kubernetes.io/component=injector; kubectl -n ${webhook.service.namespace} logs deploy/${INSTALL_NAMES.injector}`);
  }
  return pass('injector-endpoints', `Service ${webhook.service.name} has ${webhook.readyEndpoints} ready endpoint(s)`);
}

function deployments({ deployments, namespace }: InstallState): CheckLine[] {
  if (deployments.length === 0) return [fail('deployments', `no Outrigger Deployment in namespace ${namespace}`, 'apply your overlay, or pass --namespace')];
  return deployments.map((d) =>
    d.available >= d.desired && d.desired > 0
      ? pass(`deployment ${d.name}`, `${d.available}/${d.desired} available`)
      : fail(`deployment ${d.name}`, `${d.available}/${d.desired} available`, `kubectl -n ${namespace} describe deploy/${d.name}; kubectl -n ${namespace} logs deploy/${d.name}`),
  );
}

function caBundle({ webhook, injectorReplicas }: InstallState): CheckLine {
  if (!webhook?.caBundle) return fail('ca-bundle', 'the webhook configuration has no caBundle: the API server cannot trust the injector', 'the cert-manager (or Jetstack cainjector) sets it; check its logs');
  const serving = servedCertificates(injectorReplicas);
  if (serving.length === 0) return fail('ca-bundle', 'cannot verify: no injector replica reports the certificate it serves', 'see the deployment and served-certificate lines');
  const untrusted = serving.filter(({ certificate }) => !verifiesAgainst(certificate.pem, webhook.caBundle));
  if (untrusted.length > 0) {
    const which = untrusted.map(({ pod, certificate }) => `${pod} serves ${certificate.subject}, issued by ${certificate.issuer}`).join('; ');
    return fail('ca-bundle', `the webhook's caBundle does not verify the certificate an injector replica serves (${which}): the API server will refuse its TLS`, 'the cert-manager repairs a drifted caBundle within seconds when it runs; check its logs and Events');
  }
  const subjects = [...new Set(serving.map(({ certificate }) => certificate.subject))].join(', ');
  return pass('ca-bundle', `the webhook's caBundle verifies the serving certificate of ${serving.length} injector replica(s) (${subjects})`);
}

/** Each replica's served certificate, as it reports it on /readyz: check never reads the Secret, whose key it has no need of. */
function served({ injectorReplicas, namespace }: InstallState): CheckLine {
  if (injectorReplicas.length === 0) return fail('served-certificate', 'no injector pod to ask', 'see the deployment lines');
  const wrong = injectorReplicas.filter((r) => !r.certificate || r.stale);
  if (wrong.length > 0) {
    const why = wrong
      .map((r) => `${r.pod}: ${r.stale && r.certificate ? `keeps serving ${short(r.certificate.fingerprint256)}: ${r.stale}` : (r.problem ?? 'ready, but reports no served certificate on /readyz (a release older than this CLI: see the versions line)')}`)
      .join('; ');
    return fail('served-certificate', `not every injector replica serves its source's latest certificate (${why})`, `an injector refuses a pair that does not parse, does not match its key or has expired, and keeps its last good one; the cert-manager writes a new pair to the Secret: kubectl -n ${namespace} logs deploy/${INSTALL_NAMES.certManager}`);
  }
  const serving = servedCertificates(injectorReplicas);
  const fingerprints = new Set(serving.map(({ certificate }) => certificate.fingerprint256));
  if (fingerprints.size > 1) {
    const who = serving.map(({ pod, certificate }) => `${pod}: ${short(certificate.fingerprint256)}`).join(', ');
    return warn('served-certificate', `the injector replicas serve ${fingerprints.size} different certificates (${who})`, 'each replica serves a new pair the moment its Secret changes: during a rotation this passes within seconds; if it persists, see the injector logs');
  }
  return pass('served-certificate', `${injectorReplicas.length} injector replica(s) serve the certificate their source holds (${short([...fingerprints][0] ?? '')})`);
}

function expiry({ injectorReplicas, now }: InstallState): CheckLine {
  const dates = servedCertificates(injectorReplicas).map(({ certificate }) => certificate.notAfter);
  if (dates.length === 0) return fail('certificate-expiry', 'no certificate to look at', 'see the ca-bundle and served-certificate lines');
  const first = new Date(Math.min(...dates.map((d) => d.getTime())));
  const left = first.getTime() - now.getTime();
  const text = `the serving certificate expires ${first.toISOString()} (${(left / DAY_MS).toFixed(1)} days)`;
  if (left <= 0) return fail('certificate-expiry', text.replace('expires', 'expired'), 'the cert-manager renews before expiry: is it running and leading? see its logs');
  if (left < DAY_MS) return fail('certificate-expiry', text, 'renewal is overdue: check the cert-manager');
  if (left < 7 * DAY_MS) return warn('certificate-expiry', text, 'renewal should have happened at 2/3 of the lifetime: check the cert-manager');
  return pass('certificate-expiry', text);
}

function servedCertificates(replicas: InstallState['injectorReplicas']): { pod: string; certificate: ParsedCertificate }[] {
  return replicas.flatMap(({ pod, certificate }) => (certificate ? [{ pod, certificate }] : []));
}

function serviceAccess({ serviceAccess, namespace, install }: InstallState): CheckLine[] {
  return serviceAccess.map((s) => {
    const check = `rbac ${s.deployment}`;
    const account = `ServiceAccount ${namespace}/${s.serviceAccount}`;
    const files = SERVICE_RBAC_FILES[s.component as ServiceComponent];
    if (s.missing.length > 0) {
      const hint = `creates what of its ServiceAccount and RBAC is missing, as deploy/base/${s.component} has it, changing nothing that exists; if your overlay changes these objects, create them from it instead: ${FROM_YOUR_OVERLAY}`;
      const fix = files && `outrigger restore ${files.map((f) => `-f ${f}`).join(' ')}${namespaceFlag(namespace)}`;
      return repair(install, { check, message: `${account} may not ${s.missing.join('; ')}`, hint, fix });
    }
    return pass(check, `${account} may make all ${s.reviewed} kinds of request it needs`);
  });
}

function leases({ leases, now, namespace }: InstallState): CheckLine[] {
  return leases.map((lease) => {
    const check = `lease ${lease.name}`;
    if (!lease.holder || !lease.renewTime) return fail(check, 'held by nobody: no replica is leading', `kubectl -n ${namespace} get lease ${lease.name} -o yaml; the Deployment's logs`);
    if (!leaseCurrent(lease, now)) return fail(check, `held by ${lease.holder}, not renewed since ${lease.renewTime.toISOString()}`, 'the leader stopped renewing: is its pod running?');
    return pass(check, `held by ${lease.holder}${lease.version ? `, version ${lease.version}` : ''}`);
  });
}

/** The release a version names: SemVer build metadata (a dev build's commit) does not make another release. */
const releaseOf = (version: string) => version.split('+')[0];

/** This CLI and every running service at one release: a mix is an upgrade under way, or one left half done. */
function versions({ cliVersion, injectorReplicas, leases, now, namespace }: InstallState): CheckLine {
  const running = [
    ...injectorReplicas.filter((r) => r.ready).map((r) => ({ who: r.pod, version: r.version })),
    ...leases.flatMap((l) => (l.holder && leaseCurrent(l, now) ? [{ who: `${identityPod(l.holder)} (leading)`, version: l.version }] : [])),
  ];
  const release = releaseOf(cliVersion);
  const byVersion = new Map<string, string[]>();
  for (const { who, version } of running) {
    const key = version ?? 'no version reported (a release older than this CLI)';
    byVersion.set(key, [...(byVersion.get(key) ?? []), who]);
  }
  const listed = [...byVersion].map(([version, who]) => `${version}: ${who.join(', ')}`).join('; ');
  if (running.length === 0) return pass('versions', `this CLI is ${cliVersion}; no running service to compare (the lines above say why)`);
  if (running.every((r) => r.version !== undefined && releaseOf(r.version) === release)) return pass('versions', `this CLI and every running service are release ${release} (${listed})`);
  return warn('versions', `this CLI is ${cliVersion}, but the running services are ${listed}`, versionsHint(cliVersion, running.map((r) => r.version), namespace));
}

/** What to do about a mix, by SemVer precedence: services behind this CLI are upgraded, a CLI behind the services is replaced. */
function versionsHint(cliVersion: string, running: readonly (string | undefined)[], namespace: string): string {
  const hints = [`an upgrade under way passes once every Deployment has rolled out (kubectl -n ${namespace} rollout status deployment -l ${PART_OF_OUTRIGGER})`];
  const cli = semver.valid(cliVersion);
  const comparable = running.map((v) => (v === undefined ? v : semver.valid(v)));
  if (cli === null || comparable.includes(null)) return [...hints, 'otherwise upgrade the services (README, "Upgrade") or run the outrigger CLI of their release'].join('; ');
  const known = comparable.filter((v): v is string => typeof v === 'string');
  const newer = semver.rsort(known.filter((v) => semver.gt(v, cli)));
  if (newer[0] !== undefined) hints.push(`services run a newer release than this CLI: run the outrigger CLI of release ${newer[0]} (README, "The outrigger CLI")`);
  if (comparable.includes(undefined) || known.some((v) => semver.lt(v, cli))) hints.push('services run an older release than this CLI: finish upgrading them (README, "Upgrade"), or run the outrigger CLI of their release');
  return hints.join('; ');
}

function profiles({ profiles, injectorReplicas, install }: InstallState): CheckLine[] {
  const reference = install?.by === 'helm' ? 'the chart ships the reference one with referenceProfile.enabled' : `the reference one as your overlay ships it: ${FROM_YOUR_OVERLAY}`;
  if (profiles.length === 0) return [warn('profiles', 'no AgentProfile: nothing is injected', `kubectl apply -f <your AgentProfiles>; ${reference}`)];
  return profiles.map((p) => {
    const check = `profile ${p.name}`;
    if (p.accepted?.status !== 'True') return fail(check, `generation ${p.generation} not accepted: ${p.accepted ? `${p.accepted.reason}: ${p.accepted.message}` : 'no status yet (is the rbac-syncer running?)'}`, `kubectl get agentprofile ${p.name} -o yaml`);
    if (p.refusal) return fail(check, `generation ${p.generation} is refused by this version's profile schema, though its status says Accepted: ${p.refusal}`, 'fix the fields named; is the rbac-syncer older than this CLI?');
    if (p.observedGeneration !== p.generation) return fail(check, `the rbac-syncer has seen generation ${p.observedGeneration ?? 'none'}, the object is at ${p.generation}`, 'is the rbac-syncer running and leading?');
    const behind = injectorReplicas.filter((r) => r.generations !== undefined && r.generations[p.name] !== p.generation);
    if (behind.length > 0) {
      const which = behind.map((r) => `${r.pod} has ${r.generations?.[p.name] ?? 'none'}`).join(', ');
      return fail(check, `the injector and the rbac-syncer differ: generation ${p.generation} is in force in the rbac-syncer, ${which}`, 'an injector that cannot watch AgentProfiles keeps the last ones it saw: see its logs and its outrigger_injector_watch_restarts_total{resource="agentprofiles"}');
    }
    if (p.synced?.status !== 'True') return fail(check, `not synced: ${p.synced ? `${p.synced.reason}: ${p.synced.message}` : 'no Synced condition'}`, `kubectl get agentprofile ${p.name} -o yaml`);
    return pass(check, `generation ${p.generation} in force in both services; ${p.synced.message}; its agent meets Pod Security ${p.podSecurity ?? 'unknown'}`);
  });
}

/** Renewed within its duration: its holder still leads. */
function leaseCurrent(lease: LeaseView, now: Date): boolean {
  return lease.renewTime !== undefined && now.getTime() - lease.renewTime.getTime() <= (lease.durationSeconds ?? 15) * 1_000;
}

function namespaces({ labelledNamespaces, injectorReplicas, leases, now }: InstallState): CheckLine {
  const digest = namespacesDigest(labelledNamespaces);
  // Only the rbac-syncer that leads binds: it publishes the namespaces it binds by on its Lease. The view is
  // its own only while its version stamp names it: a leader of an older release keeps the annotations a crashed one left.
  const leaders = leases.flatMap((l) => (l.holder && l.namespaces && l.version && leaseCurrent(l, now) ? [{ pod: `${identityPod(l.holder)} (leading)`, namespaces: l.namespaces }] : []));
  const lagging = <R extends { readonly namespaces?: NamespacesHeld }>(holders: readonly R[]) => holders.filter((r) => r.namespaces !== undefined && r.namespaces.digest !== digest);
  const [injectors, syncers] = [lagging(injectorReplicas), lagging(leaders)];
  if (injectors.length + syncers.length > 0) {
    const holds = (r: { readonly pod: string; readonly namespaces?: NamespacesHeld }) => `${r.pod} holds ${r.namespaces?.held} (digest ${r.namespaces?.digest})`;
    const effects = [
      ...(injectors.length > 0 ? [`${injectors.map(holds).join(', ')}: ${injectors.length === 1 ? 'it applies' : 'each applies'} other resource defaults, canaries and Pod Security levels than the namespaces now set`] : []),
      ...(syncers.length > 0 ? [`${syncers.map(holds).join(', ')}: it binds the agents of other namespaces than those now labelled`] : []),
    ];
    const hints = [
      ...(injectors.length > 0 ? ['an injector that cannot watch namespaces keeps the last ones it saw: see its logs and its outrigger_injector_watch_restarts_total{resource="namespaces"}'] : []),
      ...(syncers.length > 0 ? ['an rbac-syncer that cannot watch namespaces is restarted once its view has been incomplete for UNHEALTHY_AFTER: see its logs and its outrigger_rbac_syncer_watch_restarts_total{resource="namespaces"}'] : []),
    ];
    return fail('namespaces', `${labelledNamespaces.length} labelled (digest ${digest}), but ${effects.join('; ')}`, `${hints.join('; ')}; a namespace changed while check ran shows here too: run check again`);
  }
  if (labelledNamespaces.length === 0) return warn('namespaces', 'no namespace is labelled outrigger.dev/injection=enabled: nothing is injected', 'kubectl label namespace <ns> outrigger.dev/injection=enabled');
  const names = labelledNamespaces.map((n) => n.name);
  const holders = [...(injectorReplicas.some((r) => r.namespaces !== undefined) ? ['every injector replica'] : []), ...(leaders.length > 0 ? ["the rbac-syncer's leader"] : [])];
  const held = holders.length > 0 ? `; ${holders.join(' and ')} ${holders.length > 1 ? 'hold' : 'holds'} them as they are` : '';
  return pass('namespaces', `${names.length} labelled: ${names.slice(0, 5).join(', ')}${names.length > 5 ? ', …' : ''}${held}`);
}

/**
 * The exec guard of the agents bound by `kind`, where a profile binds so, judged as the rbac-syncer
 * judges it: `exec-guard` (ClusterRoleBindings), `exec-guard-namespaced` (RoleBindings).
 */
function execGuard(state: InstallState, kind: RbacBindingKind): CheckLine {
  const [check, guard] = kind === 'ClusterRoleBinding' ? ['exec-guard', state.execGuard] : ['exec-guard-namespaced', state.namespacedExecGuard];
  const bound = state.profiles.filter((p) => p.bindingKind === kind).map((p) => p.name);
  if (bound.length === 0) return pass(check, `no profile binds with ${kind}s: not needed`);
  const problems = execGuardShortfalls(kind, guard.name, guard.policy, guard.binding);
  if (problems.length === 0) return pass(check, `ValidatingAdmissionPolicy ${guard.name} bound with Deny, refusing all the shipped guard refuses`);
  const emptied = `the rbac-syncer keeps the ${kind}s of ${bound.join(', ')} empty`;
  const remedy = execGuardRemedy(guard.policy, guard.binding);
  // Changed, not missing: server-side apply would keep another manager's set items (Warn beside Deny is invalid); a replace puts back exactly the shipped guard.
  const hint = guard.policy && guard.binding ? 'replaces the guard with the one deploy/base ships, which no overlay changes' : 'creates what of the guard is missing, as deploy/base/rbac-syncer has it, changing nothing that exists';
  const changed = guard.policy && guard.binding ? `validatingadmissionpolicy,validatingadmissionpolicybinding ${guard.name}` : undefined;
  return repair(state.install, { check, message: `${problems.join('; ')}: ${emptied}`, hint, fix: `${remedy.command}${namespaceFlag(state.namespace)}`, changed });
}

/** The policy without which the rbac-syncer's delete on ClusterRoleBindings (any name: RBAC cannot limit it by label) reaches bindings not its own. */
function syncerConfinement({ syncerConfinement: policy, install, namespace }: InstallState): CheckLine {
  const unconfined = "the rbac-syncer's writes of bindings are not confined to its own (its RBAC allows deleting any ClusterRoleBinding)";
  return shippedPolicy({ install, namespace }, 'syncer-confinement', policy, unconfined, SYNCER_CONFINEMENT_FILE);
}

/** The policy without which the cert-manager's patch of the webhook configuration reaches every field; not needed without Outrigger's cert-manager (Jetstack's issues the certificate). */
function certManagerConfinement({ certManagerConfinement: policy, deployments, install, namespace }: InstallState): CheckLine {
  if (!deployments.some((d) => d.name === INSTALL_NAMES.certManager)) return pass('cert-manager-confinement', `no Deployment ${INSTALL_NAMES.certManager}: not needed`);
  const unconfined = "the cert-manager's patch of the webhook configuration is not confined to its caBundles (its RBAC allows changing where the webhook calls and which pods it sees)";
  return shippedPolicy({ install, namespace }, 'cert-manager-confinement', policy, unconfined, CERT_MANAGER_CONFINEMENT_FILE);
}

/** The policy without which a pod the webhook skips may bring a container named like an agent. */
function forgedAgent({ forgedAgent: policy, install, namespace }: InstallState): CheckLine {
  const unguarded = "a pod that does not opt in may bring a container named like a profile's agent (the webhook does not see it)";
  return shippedPolicy({ install, namespace }, 'forged-agent', policy, unguarded, FORGED_AGENT_POLICY_FILE);
}

/**
 * What Kubernetes' own type check (kube-controller-manager, in each policy's status) found in the
 * shipped policies: a mistyped expression may never hold, so its policy refuses all or nothing.
 */
function policyTypes({ policyTypes: policies, serverVersion, install, namespace }: InstallState): CheckLine {
  const warned = policies.filter((p) => p.warnings !== undefined && p.warnings.length > 0);
  if (warned.length > 0) {
    const found = warned.flatMap((p) => (p.warnings ?? []).map((w) => `${p.name} ${w.fieldRef}: ${w.warning.split('\n')[0]}`));
    const files = [...new Set(warned.map((p) => p.file))];
    const putBack = install?.by === 'helm' ? `${helmRepair(install)} (with --force-conflicts where it reports a conflict with a field changed by hand)` : files.map((f) => `outrigger restore --replace -f ${f}${namespaceFlag(namespace)}`).join(' && ');
    const hint = `a policy changed by hand is put back as shipped by ${putBack}; if it is as shipped, Kubernetes ${serverVersion ?? ''} types it unlike 1.30 and 1.36, on which Outrigger's tests type it: report it with this output`;
    return warn('policy-types', `Kubernetes finds ${found.length} mistyped expression(s): ${found.join('; ')}`, hint);
  }
  const typed = policies.filter((p) => p.typed);
  const pending = typed.filter((p) => p.warnings === undefined);
  if (pending.length > 0) {
    const hint = "kube-controller-manager's validatingadmissionpolicy-status-controller types a policy within seconds of each change: run check again; if this stays, that controller is off";
    return warn('policy-types', `Kubernetes has not yet typed ${pending.map((p) => p.name).join(', ')}`, hint);
  }
  const untyped = policies.filter((p) => !p.typed).map((p) => p.name);
  const none = untyped.length > 0 ? `; it types nothing of ${untyped.join(', ')} (rules with a wildcard or a subresource), which Outrigger's tests type on 1.30 and 1.36` : '';
  if (typed.length === 0) return pass('policy-types', `no shipped policy that Kubernetes types is present${none}`);
  return pass('policy-types', `Kubernetes types the validations of ${typed.map((p) => p.name).join(', ')} without a warning${none}`);
}

/** A policy deploy/base ships as is (no overlay changes it): present, and bound with Deny. */
function shippedPolicy({ install, namespace }: Pick<InstallState, 'install' | 'namespace'>, check: string, policy: AdmissionPolicyView, consequence: string, file: string): CheckLine {
  const base = file.split('/').slice(0, -1).join('/');
  if (policy.policies.length === 0 || policy.bindings.length === 0) {
    const missing = policy.policies.length === 0 ? 'its ValidatingAdmissionPolicy is missing' : 'its ValidatingAdmissionPolicyBinding is missing';
    return repair(install, { check, message: `${missing}: ${consequence}`, hint: `creates what of the policy is missing, as ${base} has it, changing nothing that exists`, fix: `outrigger restore -f ${file}${namespaceFlag(namespace)}` });
  }
  if (!policy.bindings.some((b) => b.actions.includes('Deny'))) {
    const hint = 'replaces the policy with the one deploy/base ships, which no overlay changes';
    const message = `no binding of it denies (${policy.bindings.map((b) => `${b.name}: ${b.actions.join(', ') || 'no action'}`).join('; ')}): ${consequence}`;
    return repair(install, { check, message, hint, fix: `outrigger restore --replace -f ${file}${namespaceFlag(namespace)}`, changed: `validatingadmissionpolicybinding ${policy.bindings.map((b) => b.name).join(' ')}` });
  }
  return pass(check, `ValidatingAdmissionPolicy ${policy.policies.join(', ')} bound with Deny`);
}

/** How long agents may stay outdated after their profile changed before check warns: a week of rollouts. */
export const OUTDATED_WARN_AFTER_MS = 7 * DAY_MS;
/** Workloads a line names; the rest are counted. */
const NAMED_WORKLOADS = 3;

function agents({ agents, now }: InstallState): CheckLine[] {
  if (!agents) return [];
  const missingRows = agents.rows.filter((r) => r.missing > 0);
  const missing = missingRows.reduce((n, r) => n + r.missing, 0);
  const missingLine =
    missing === 0
      ? pass('agents-missing', `all ${agents.pods} live opted-in pod(s) carry their agent`)
      : fail(
          'agents-missing',
          `${missing} live opted-in pod(s) run without their agent, in ${countWorkloads(missingRows)} workload(s): ${nameWorkloads(missingRows, (r) => r.missing)}`,
          'created while the webhook was off or ignored it (failurePolicy Ignore), while the namespace was unlabelled, or before install; with the injector serving, restarting their workloads re-creates them with the agent (bare pods, Jobs and CronJobs are skipped and named: re-create those yourself). outrigger agents --missing lists them',
          `outrigger rollout restart --missing ${scopeFlag(missingRows)}`,
        );
  const stale = agents.profiles.filter((p) => p.since === undefined || now.getTime() - p.since.getTime() > OUTDATED_WARN_AFTER_MS);
  const outdatedRows = agents.rows.filter((r) => r.outdated > 0);
  const staleRows = outdatedRows.filter((r) => stale.some((p) => p.name === r.profile));
  const outdated = outdatedRows.reduce((n, r) => n + r.outdated, 0);
  const days = OUTDATED_WARN_AFTER_MS / DAY_MS;
  if (outdated === 0) return [missingLine, pass('agents-outdated', 'no live pod runs an agent from an earlier profile spec')];
  if (staleRows.length === 0) return [missingLine, pass('agents-outdated', `${outdated} pod(s) run an agent from an earlier spec of a profile changed less than ${days} days ago`)];
  const since = stale
    .filter((p) => staleRows.some((r) => r.profile === p.name))
    .map((p) => `${p.name} ${p.hash} ${p.since ? `since ${p.since.toISOString()}` : '(not stored by the rbac-syncer: since unknown)'}`)
    .join('; ');
  return [
    missingLine,
    warn(
      'agents-outdated',
      `${staleRows.reduce((n, r) => n + r.outdated, 0)} pod(s) in ${countWorkloads(staleRows)} workload(s) still run an agent from an earlier spec, more than ${days} days after the spec in force (${since}): ${nameWorkloads(staleRows, (r) => r.outdated)}`,
      `restart them through their workloads' strategies: outrigger rollout restart --outdated ${scopeFlag(staleRows)} (--dry-run first to see what it would restart and skip)`,
    ),
  ];
}

type AgentRow = NonNullable<InstallState['agents']>['rows'][number];

function countWorkloads(rows: readonly AgentRow[]): number {
  return new Set(rows.map((r) => `${r.workload.namespace}/${workloadName(r.workload)}`)).size;
}

/** The workloads with the most such pods first, up to NAMED_WORKLOADS, with their counts. */
function nameWorkloads(rows: readonly AgentRow[], count: (r: AgentRow) => number): string {
  const sorted = [...rows].sort((a, b) => count(b) - count(a));
  const named = sorted.slice(0, NAMED_WORKLOADS).map((r) => `${r.workload.namespace}/${workloadName(r.workload)} (${count(r)}, ${r.profile})`);
  return named.join(', ') + (sorted.length > NAMED_WORKLOADS ? `, and ${sorted.length - NAMED_WORKLOADS} more` : '');
}

/** `-n NS` when every row is in one namespace, else `-A`. */
function scopeFlag(rows: readonly AgentRow[]): string {
  const namespaces = new Set(rows.map((r) => r.workload.namespace));
  return namespaces.size === 1 ? `-n ${[...namespaces][0]}` : '-A';
}

function short(fingerprint: string): string {
  return fingerprint.slice(0, 11);
}

/** `-n NS` where the install is not in the namespace deploy/base names. */
function namespaceFlag(namespace: string): string {
  return namespace === INSTALL_NAMES.namespace ? '' : ` -n ${namespace}`;
}
