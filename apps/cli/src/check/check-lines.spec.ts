import type { RbacBindingKind } from '@outrigger/agent-profiles';
import { namespacesDigest } from '@outrigger/admission';
import { execGuardBinding, execGuardName, execGuardPolicy, projectGuardBinding, projectGuardPolicy } from '@outrigger/install';
import { issueCertificate, parseCertificate } from '@outrigger/pki';
import { describe, expect, it } from 'vitest';
import { checkLines, type CheckLine } from './check-lines.js';
import type { InstallState, PolicyTypesView } from './install-state.js';

const NOW = new Date('2026-11-25T12:00:00Z');
const DAY = 86_400_000;
const ca = issueCertificate({ commonName: 'outrigger-webhook-ca', usage: 'ca', lifetimeMs: 365 * DAY, now: NOW, keyBits: 1024 });
const otherCa = issueCertificate({ commonName: 'someone-else', usage: 'ca', lifetimeMs: 365 * DAY, now: NOW, keyBits: 1024 });
function leafOf(lifetimeMs: number, issuer = ca) {
  const parsed = parseCertificate(issueCertificate({ commonName: 'outrigger-injector.outrigger-system.svc', usage: 'server', issuer, lifetimeMs, now: NOW, keyBits: 1024 }).cert);
  if (!parsed) throw new Error('the test leaf does not parse');
  return parsed;
}
const leaf = leafOf(30 * DAY);
const strangerLeaf = leafOf(30 * DAY, otherCa);

/** The exec guard of `kind` as shipped, read as the check reads it from the cluster. */
const shippedGuard = (kind: RbacBindingKind) => ({ name: execGuardName(kind), policy: projectGuardPolicy(execGuardPolicy(kind)), binding: projectGuardBinding(execGuardBinding(kind)) });
const GUARD = shippedGuard('ClusterRoleBinding');
const NO_GUARD = { ...GUARD, policy: undefined, binding: undefined };
const guardWith = (policySpec: object, bindingSpec: object = {}) => ({
  ...GUARD,
  policy: projectGuardPolicy({ spec: { ...execGuardPolicy().spec, ...policySpec } }),
  binding: projectGuardBinding({ spec: { ...execGuardBinding().spec, ...bindingSpec } }),
});

const WEBHOOK = { name: 'outrigger-injector', caBundle: ca.cert, service: { namespace: 'outrigger-system', name: 'outrigger-injector', port: 443 }, serviceExists: true, readyEndpoints: 2 };
const PROFILE = {
  name: 'xxl-job',
  generation: 3,
  observedGeneration: 3,
  bindingKind: 'ClusterRoleBinding',
  accepted: { status: 'True', reason: 'Valid', message: 'generation 3 is in force' },
  synced: { status: 'True', reason: 'Synced', message: 'ClusterRoleBinding xxl-agent-exec.<namespace> (one per namespace) binds the ServiceAccounts of live agents to ClusterRole xxl-agent-exec' },
  podSecurity: 'restricted' as const,
};

const SHOP = { name: 'shop', resourceVersion: '812' };
const HOLDS_SHOP = { held: 1, digest: namespacesDigest([SHOP]) };
const VERSION = '0.2.0+3f2a9c1d0b7e';
const LEASE = { name: 'outrigger-rbac-syncer', holder: 'outrigger-rbac-syncer-x_0a1b2c3d', renewTime: new Date(NOW.getTime() - 2_000), durationSeconds: 15, namespaces: HOLDS_SHOP, version: VERSION };

const REPLICA_A = { pod: 'outrigger-injector-a', ready: true, certificate: leaf, generations: { 'xxl-job': 3 }, namespaces: HOLDS_SHOP, version: VERSION };
const REPLICA_B = { ...REPLICA_A, pod: 'outrigger-injector-b' };

const healthy: InstallState = {
  namespace: 'outrigger-system',
  now: NOW,
  cliVersion: '0.2.0',
  serverVersion: 'v1.36.0',
  crd: { established: true },
  webhook: WEBHOOK,
  deployments: [
    { name: 'outrigger-injector', desired: 2, available: 2 },
    { name: 'outrigger-rbac-syncer', desired: 2, available: 2 },
  ],
  install: { by: 'manifests', instance: 'outrigger' },
  serviceAccess: [
    { deployment: 'outrigger-injector', component: 'injector', serviceAccount: 'outrigger-injector', reviewed: 5, missing: [] },
    { deployment: 'outrigger-rbac-syncer', component: 'rbac-syncer', serviceAccount: 'outrigger-rbac-syncer', reviewed: 18, missing: [] },
  ],
  injectorReplicas: [REPLICA_A, REPLICA_B],
  leases: [LEASE],
  profiles: [PROFILE],
  labelledNamespaces: [SHOP],
  execGuard: GUARD,
  namespacedExecGuard: shippedGuard('RoleBinding'),
  syncerConfinement: { policies: ['outrigger-rbac-syncer-confinement'], bindings: [{ name: 'outrigger-rbac-syncer-confinement', actions: ['Deny'] }] },
  certManagerConfinement: { policies: ['outrigger-cert-manager-confinement'], bindings: [{ name: 'outrigger-cert-manager-confinement', actions: ['Deny'] }] },
  forgedAgent: { policies: ['outrigger-forged-agent'], bindings: [{ name: 'outrigger-forged-agent', actions: ['Deny'] }] },
  policyTypes: [
    { name: 'outrigger-exec-guard', file: 'deploy/base/rbac-syncer/exec-guard.yaml', typed: false, warnings: [] },
    { name: 'outrigger-forged-agent', file: 'deploy/base/webhook/forged-agent.yaml', typed: true, warnings: [] },
    { name: 'outrigger-opt-in-missing', file: 'deploy/base/webhook/opt-in-missing.yaml', typed: true, warnings: [] },
  ],
  agents: { profiles: [{ name: 'xxl-job', hash: 'aaaa', since: new Date(NOW.getTime() - 30 * DAY) }], specChangeLag: { ms: 300_000, from: 'the default' }, refused: [], pods: 0, rows: [] },
  readErrors: [],
};

const failed = (lines: CheckLine[]) => lines.filter((l) => l.result === 'fail').map((l) => l.check);

describe('checkLines', () => {
  it('passes everything on a healthy install, one line per Deployment, Lease and profile', () => {
    const lines = checkLines(healthy);
    expect(lines.filter((l) => l.result !== 'pass')).toEqual([]);
    expect(lines.map((l) => l.check)).toEqual([
      'kubernetes-version',
      'crd',
      'webhook',
      'injector-endpoints',
      'deployment outrigger-injector',
      'deployment outrigger-rbac-syncer',
      'rbac outrigger-injector',
      'rbac outrigger-rbac-syncer',
      'ca-bundle',
      'served-certificate',
      'certificate-expiry',
      'lease outrigger-rbac-syncer',
      'versions',
      'profile xxl-job',
      'namespaces',
      'exec-guard',
      'exec-guard-namespaced',
      'syncer-confinement',
      'cert-manager-confinement',
      'forged-agent',
      'policy-types',
      'agents-missing',
      'agents-outdated',
    ]);
  });

  it("names each running service's version, and passes when all are this CLI's release whatever commit built them", () => {
    const line = checkLines(healthy).find((l) => l.check === 'versions');
    expect(line).toEqual({ check: 'versions', result: 'pass', message: `this CLI and every running service are release 0.2.0 (${VERSION}: outrigger-injector-a, outrigger-injector-b, outrigger-rbac-syncer-x (leading))` });
    expect(checkLines(healthy).find((l) => l.check === 'lease outrigger-rbac-syncer')?.message).toBe(`held by ${LEASE.holder}, version ${VERSION}`);
  });

  const OLDER = 'services run an older release than this CLI: finish upgrading them (README, "Upgrade"), or run the outrigger CLI of their release';
  const newer = (release: string) => `services run a newer release than this CLI: run the outrigger CLI of release ${release} (README, "The outrigger CLI")`;
  it.each<[string, Partial<InstallState>, string, string[]]>([
    ['an injector replica of an older release', { injectorReplicas: [REPLICA_A, { ...REPLICA_B, version: '0.1.0' }] }, `${VERSION}: outrigger-injector-a, outrigger-rbac-syncer-x (leading); 0.1.0: outrigger-injector-b`, [OLDER]],
    ['a leader that stamps no version (its release predates the stamp)', { leases: [{ ...LEASE, version: undefined }] }, `${VERSION}: outrigger-injector-a, outrigger-injector-b; no version reported (a release older than this CLI): outrigger-rbac-syncer-x (leading)`, [OLDER]],
    ['a CLI newer than every service', { cliVersion: '0.3.0' }, `${VERSION}: outrigger-injector-a, outrigger-injector-b, outrigger-rbac-syncer-x (leading)`, [OLDER]],
    ['a CLI older than every service', { cliVersion: '0.1.9' }, `${VERSION}: outrigger-injector-a, outrigger-injector-b, outrigger-rbac-syncer-x (leading)`, [newer('0.2.0')]],
    ['services on both sides of this CLI, a release candidate among them', { cliVersion: '0.2.0', injectorReplicas: [{ ...REPLICA_A, version: '0.3.0-rc.1+abc' }, { ...REPLICA_B, version: '0.10.0' }], leases: [{ ...LEASE, version: '0.1.0' }] }, '0.3.0-rc.1+abc: outrigger-injector-a; 0.10.0: outrigger-injector-b; 0.1.0: outrigger-rbac-syncer-x (leading)', [newer('0.10.0'), OLDER]],
    ['a version that is not SemVer', { injectorReplicas: [REPLICA_A, { ...REPLICA_B, version: 'dev' }] }, `${VERSION}: outrigger-injector-a, outrigger-rbac-syncer-x (leading); dev: outrigger-injector-b`, ['otherwise upgrade the services (README, "Upgrade") or run the outrigger CLI of their release']],
  ])('warns, naming who runs what and which side to move, on %s', (_, change, listed, advice) => {
    const lines = checkLines({ ...healthy, ...change });
    expect(failed(lines)).toEqual([]);
    const line = lines.find((l) => l.check === 'versions');
    expect(line?.result).toBe('warn');
    expect(line?.message).toBe(`this CLI is ${change.cliVersion ?? '0.2.0'}, but the running services are ${listed}`);
    expect(line?.hint).toBe(['an upgrade under way passes once every Deployment has rolled out (kubectl -n outrigger-system rollout status deployment -l app.kubernetes.io/part-of=outrigger)', ...advice].join('; '));
  });

  it('compares only replicas that are ready and leaders whose Lease is current', () => {
    const lines = checkLines({
      ...healthy,
      injectorReplicas: [REPLICA_A, { pod: 'outrigger-injector-c', ready: false, problem: 'its /readyz cannot be read' }],
      leases: [LEASE, { name: 'outrigger-cert-manager', holder: 'outrigger-cert-manager-y_1a', renewTime: new Date(NOW.getTime() - 60_000), durationSeconds: 15, version: '0.1.0' }],
    });
    expect(lines.find((l) => l.check === 'versions')?.result).toBe('pass');
  });

  it.each<[string, Partial<InstallState>, string[]]>([
    ['a caBundle of another CA', { webhook: { ...WEBHOOK, caBundle: otherCa.cert } }, ['ca-bundle']],
    ['no ready injector', { webhook: { ...WEBHOOK, readyEndpoints: 0 }, deployments: [{ name: 'outrigger-injector', desired: 2, available: 0 }] }, ['injector-endpoints', 'deployment outrigger-injector']],
    ['no webhook configuration', { webhook: undefined }, ['webhook', 'injector-endpoints', 'ca-bundle']],
    [
      'an expired certificate in the Secret that the injectors refuse',
      { injectorReplicas: [REPLICA_A, { ...REPLICA_B, stale: 'Secret outrigger-system/outrigger-injector-tls tls.crt: the certificate expired at 2026-11-24T12:00:00.000Z' }] },
      ['served-certificate'],
    ],
    ['a replica serving an expired certificate', { injectorReplicas: [REPLICA_A, { ...REPLICA_B, certificate: leafOf(-DAY) }] }, ['certificate-expiry']],
    ['a replica serving a certificate of another CA', { injectorReplicas: [REPLICA_A, { ...REPLICA_B, certificate: strangerLeaf }] }, ['ca-bundle']],
    ['no injector replica to ask', { injectorReplicas: [] }, ['ca-bundle', 'served-certificate', 'certificate-expiry']],
    ['a ready replica that reports no certificate (an older release)', { injectorReplicas: [REPLICA_A, { ...REPLICA_B, certificate: undefined }] }, ['served-certificate']],
    ['the exec guard deleted', { execGuard: { ...GUARD, binding: undefined } }, ['exec-guard']],
    ['the exec guard rewritten to allow everything', { execGuard: guardWith({ validations: [{ expression: 'true' }] }) }, ['exec-guard']],
    ['a stale Lease', { leases: [{ ...LEASE, renewTime: new Date(NOW.getTime() - 60_000) }] }, ['lease outrigger-rbac-syncer']],
    ['the CRD missing', { crd: undefined }, ['crd']],
    // Jetstack's cert-manager in place of Outrigger's: its confinement is not needed.
    ['no cert-manager confinement without Outrigger\'s cert-manager', { certManagerConfinement: { policies: [], bindings: [] } }, []],
    [
      'a ServiceAccount missing part of its RBAC',
      { serviceAccess: [{ deployment: 'outrigger-injector', component: 'injector', serviceAccount: 'outrigger-injector', reviewed: 5, missing: ['list agentprofiles.outrigger.dev'] }] },
      ['rbac outrigger-injector'],
    ],
    ['an API server older than the minimum', { serverVersion: 'v1.29.4' }, ['kubernetes-version']],
    ['an unreadable kind', { readErrors: ['Leases in outrigger-system: 403 Forbidden'] }, ['read']],
  ])('fails the right line for %s', (_what, broken, lines) => {
    expect(failed(checkLines({ ...healthy, ...broken }))).toEqual(lines);
  });

  it('judges the certificates the replicas serve, never the Secret: names who refuses what, and warns while replicas differ', () => {
    const line = (state: Partial<InstallState>, check: string) => checkLines({ ...healthy, ...state }).find((l) => l.check === check);
    const expired = 'Secret outrigger-system/outrigger-injector-tls tls.crt: the certificate expired at 2026-11-24T12:00:00.000Z';
    expect(line({ injectorReplicas: [REPLICA_A, { ...REPLICA_B, stale: expired }] }, 'served-certificate')).toMatchObject({
      result: 'fail',
      message: `not every injector replica serves its source's latest certificate (outrigger-injector-b: keeps serving ${leaf.fingerprint256.slice(0, 11)}: ${expired})`,
    });
    expect(line({ injectorReplicas: [REPLICA_A, { ...REPLICA_B, certificate: strangerLeaf }] }, 'ca-bundle')?.message).toBe(
      `the webhook's caBundle does not verify the certificate an injector replica serves (outrigger-injector-b serves ${strangerLeaf.subject}, issued by ${strangerLeaf.issuer}): the API server will refuse its TLS`,
    );
    const rotating = line({ injectorReplicas: [REPLICA_A, { ...REPLICA_B, certificate: leafOf(60 * DAY) }] }, 'served-certificate');
    expect(rotating).toMatchObject({ result: 'warn', message: expect.stringMatching(/^the injector replicas serve 2 different certificates \(outrigger-injector-a: .+, outrigger-injector-b: .+\)$/) });
  });

  const REPAIRS: [string, Partial<InstallState>, string, string][] = [
    ['the guard policy deleted', { execGuard: { ...GUARD, policy: undefined } }, 'exec-guard', 'outrigger restore -f deploy/base/rbac-syncer/exec-guard.yaml'],
    ['the guard binding deleted', { execGuard: { ...GUARD, binding: undefined } }, 'exec-guard', 'outrigger restore -f deploy/base/rbac-syncer/exec-guard.yaml'],
    ['the guard failing open', { execGuard: guardWith({ failurePolicy: 'Ignore' }) }, 'exec-guard', 'outrigger restore --replace -f deploy/base/rbac-syncer/exec-guard.yaml'],
    ['the guard binding looking in one namespace', { execGuard: guardWith({}, { paramRef: { ...execGuardBinding().spec.paramRef, namespace: 'empty' } }) }, 'exec-guard', 'outrigger restore --replace -f deploy/base/rbac-syncer/exec-guard.yaml'],
    ['the forged-agent binding deleted', { forgedAgent: { policies: ['outrigger-forged-agent'], bindings: [] } }, 'forged-agent', 'outrigger restore -f deploy/base/webhook/forged-agent.yaml'],
    [
      'the forged-agent binding changed to warn',
      { forgedAgent: { policies: ['outrigger-forged-agent'], bindings: [{ name: 'outrigger-forged-agent', actions: ['Warn'] }] } },
      'forged-agent',
      'outrigger restore --replace -f deploy/base/webhook/forged-agent.yaml',
    ],
    [
      "the cert-manager's confinement deleted, with Outrigger's cert-manager installed",
      { deployments: [...healthy.deployments, { name: 'outrigger-cert-manager', desired: 1, available: 1 }], certManagerConfinement: { policies: [], bindings: [] } },
      'cert-manager-confinement',
      'outrigger restore -f deploy/base/cert-manager/cert-manager-confinement.yaml',
    ],
    ['the confinement policy deleted', { syncerConfinement: { policies: [], bindings: [{ name: 'outrigger-rbac-syncer-confinement', actions: ['Deny'] }] } }, 'syncer-confinement', 'outrigger restore -f deploy/base/rbac-syncer/syncer-confinement.yaml'],
    [
      'the confinement binding changed to audit',
      { syncerConfinement: { policies: ['outrigger-rbac-syncer-confinement'], bindings: [{ name: 'outrigger-rbac-syncer-confinement', actions: ['Audit'] }] } },
      'syncer-confinement',
      'outrigger restore --replace -f deploy/base/rbac-syncer/syncer-confinement.yaml',
    ],
    [
      'the guard binding changed to warn',
      { execGuard: guardWith({}, { validationActions: ['Warn'] }) },
      'exec-guard',
      'outrigger restore --replace -f deploy/base/rbac-syncer/exec-guard.yaml',
    ],
    [
      "the injector's RoleBinding deleted",
      { serviceAccess: [{ deployment: 'outrigger-injector', component: 'injector', serviceAccount: 'outrigger-injector', reviewed: 5, missing: ['get secrets'] }] },
      'rbac outrigger-injector',
      'outrigger restore -f deploy/base/injector/service-account.yaml -f deploy/base/injector/role.yaml -f deploy/base/injector/role-binding.yaml',
    ],
    [
      "the rbac-syncer's RBAC in another install namespace",
      { namespace: 'tools', serviceAccess: [{ deployment: 'outrigger-rbac-syncer', component: 'rbac-syncer', serviceAccount: 'outrigger-rbac-syncer', reviewed: 18, missing: ['list pods'] }] },
      'rbac outrigger-rbac-syncer',
      'outrigger restore -f deploy/base/rbac-syncer/rbac.yaml -n tools',
    ],
    ["the injector's Service deleted", { webhook: { ...WEBHOOK, serviceExists: false } }, 'webhook', 'outrigger restore -f deploy/base/injector/service.yaml'],
  ];

  it.each(REPAIRS)('for %s, fixes by creating only what is missing or putting back the shipped guard', (_what, broken, check, fix) => {
    expect(checkLines({ ...healthy, ...broken }).find((l) => l.check === check)).toMatchObject({ result: 'fail', fix });
  });

  it.each(REPAIRS)("on a Helm install, for %s, hints Helm's repair of its release (a changed object deleted first) and prints no fix by hand", (_what, broken, check, fix) => {
    const helm: Partial<InstallState> = { install: { by: 'helm', release: 'platform', releaseNamespace: 'default' } };
    const line = checkLines({ ...healthy, ...helm, ...broken }).find((l) => l.check === check);
    const upgrade = 'helm upgrade platform <your chart> --version <its installed version> --namespace default --reuse-values;';
    expect(line).toEqual({ check, result: 'fail', message: expect.any(String), hint: expect.stringContaining(fix.startsWith('outrigger restore --replace') ? `: kubectl delete validatingadmissionpolicy` : `: ${upgrade}`) });
    expect(line?.hint).toContain(upgrade);
  });

  it('on a Helm install, deletes exactly the changed objects before Helm puts them back', () => {
    const helm: Partial<InstallState> = { install: { by: 'helm', release: 'platform', releaseNamespace: 'default' } };
    const warned = { forgedAgent: { policies: ['outrigger-forged-agent'], bindings: [{ name: 'outrigger-forged-agent', actions: ['Warn'] }] } };
    expect(checkLines({ ...healthy, ...helm, ...warned }).find((l) => l.check === 'forged-agent')?.hint).toContain(': kubectl delete validatingadmissionpolicybinding outrigger-forged-agent, then helm upgrade platform ');
    const guard = { execGuard: guardWith({}, { validationActions: ['Warn'] }) };
    expect(checkLines({ ...healthy, ...helm, ...guard }).find((l) => l.check === 'exec-guard')?.hint).toContain(`: kubectl delete validatingadmissionpolicy,validatingadmissionpolicybinding ${GUARD.name}, then helm upgrade platform `);
  });

  it('on a Helm install, names no overlay and no restore in any hint', () => {
    const helm: Partial<InstallState> = { install: { by: 'helm', release: 'platform', releaseNamespace: 'default' } };
    for (const broken of [{ webhook: undefined }, { profiles: [] }, ...REPAIRS.map(([, b]) => b)]) {
      for (const line of checkLines({ ...healthy, ...helm, ...broken })) expect(`${line.hint ?? ''} ${line.fix ?? ''}`, line.check).not.toMatch(/outrigger restore|kubectl replace|deploy\/overlays/);
    }
  });

  it('never hints to apply a base or an overlay over an install: that reverts the overlay (images, replicas, patches)', () => {
    const broken: Partial<InstallState>[] = [
      { webhook: undefined },
      { profiles: [] },
      { deployments: [] },
      { execGuard: NO_GUARD },
      { serviceAccess: [{ deployment: 'outrigger-cert-manager', component: 'cert-manager', serviceAccount: 'outrigger-cert-manager', reviewed: 9, missing: ['create secrets'] }] },
    ];
    for (const state of broken) {
      for (const line of checkLines({ ...healthy, ...state })) {
        expect(`${line.hint ?? ''} ${line.fix ?? ''}`, line.check).not.toMatch(/kubectl apply[^|;]* -k deploy\/(base\/(?!crd)|overlays)/);
      }
    }
  });

  it('fails a profile whose generations differ between the services, naming both', () => {
    const edited = { ...PROFILE, generation: 4 };
    const lines = checkLines({ ...healthy, profiles: [{ ...edited, observedGeneration: 4 }] });
    expect(lines.find((l) => l.check === 'profile xxl-job')).toMatchObject({ result: 'fail', message: expect.stringContaining('outrigger-injector-a has 3') });
    const syncerBehind = checkLines({ ...healthy, profiles: [edited] });
    expect(syncerBehind.find((l) => l.check === 'profile xxl-job')).toMatchObject({ result: 'fail', message: 'the rbac-syncer has seen generation 3, the object is at 4' });
  });

  it('fails the namespaces while an injector replica holds another view of them, naming it, and passes one that reads none', () => {
    const annotated = { ...SHOP, resourceVersion: '813' };
    const caughtUp = { held: 1, digest: namespacesDigest([annotated]) };
    const leaseCaughtUp = [{ ...LEASE, namespaces: caughtUp }];
    const line = checkLines({ ...healthy, labelledNamespaces: [annotated], leases: leaseCaughtUp }).find((l) => l.check === 'namespaces');
    expect(line).toMatchObject({ result: 'fail', message: expect.stringContaining(`outrigger-injector-a holds 1 (digest ${HOLDS_SHOP.digest}), outrigger-injector-b holds 1`) });
    expect(line?.message).toContain(': each applies other resource defaults');
    expect(line?.message).not.toContain('rbac-syncer');
    expect(line?.hint).toContain('outrigger_injector_watch_restarts_total{resource="namespaces"}');
    const oneBehind = healthy.injectorReplicas.map((r) => (r.pod === 'outrigger-injector-a' ? { ...r, namespaces: caughtUp } : r));
    const one = checkLines({ ...healthy, labelledNamespaces: [annotated], injectorReplicas: oneBehind, leases: leaseCaughtUp }).find((l) => l.check === 'namespaces');
    expect(one?.message).toMatch(/, but outrigger-injector-b holds 1 \(digest [0-9a-f]{16}\): it applies other resource defaults/);
    const injectorsCaughtUp = healthy.injectorReplicas.map((r) => ({ ...r, namespaces: caughtUp }));
    expect(checkLines({ ...healthy, labelledNamespaces: [annotated], injectorReplicas: injectorsCaughtUp, leases: leaseCaughtUp }).find((l) => l.check === 'namespaces')).toMatchObject({
      result: 'pass',
      message: "1 labelled: shop; every injector replica and the rbac-syncer's leader hold them as they are",
    });
    const unlabelledStill = checkLines({ ...healthy, labelledNamespaces: [] }).find((l) => l.check === 'namespaces');
    expect(unlabelledStill?.result).toBe('fail');
    const fromFile = healthy.injectorReplicas.map(({ namespaces: _held, ...r }) => r);
    expect(checkLines({ ...healthy, labelledNamespaces: [annotated], injectorReplicas: fromFile, leases: leaseCaughtUp }).find((l) => l.check === 'namespaces')).toMatchObject({
      result: 'pass',
      message: "1 labelled: shop; the rbac-syncer's leader holds them as they are",
    });
  });

  it("fails the namespaces while the rbac-syncer's leader publishes another view of them on its Lease, naming its pod and what it binds, with the hint for syncers alone", () => {
    const annotated = { ...SHOP, resourceVersion: '813' };
    const caughtUp = { held: 1, digest: namespacesDigest([annotated]) };
    const injectorReplicas = healthy.injectorReplicas.map((r) => ({ ...r, namespaces: caughtUp }));
    const line = checkLines({ ...healthy, labelledNamespaces: [annotated], injectorReplicas }).find((l) => l.check === 'namespaces');
    expect(line).toMatchObject({
      result: 'fail',
      message: `1 labelled (digest ${caughtUp.digest}), but outrigger-rbac-syncer-x (leading) holds 1 (digest ${HOLDS_SHOP.digest}): it binds the agents of other namespaces than those now labelled`,
      hint: 'an rbac-syncer that cannot watch namespaces is restarted once its view has been incomplete for UNHEALTHY_AFTER: see its logs and its outrigger_rbac_syncer_watch_restarts_total{resource="namespaces"}; a namespace changed while check ran shows here too: run check again',
    });
    const both = checkLines({ ...healthy, labelledNamespaces: [annotated] }).find((l) => l.check === 'namespaces');
    expect(both?.message).toMatch(/outrigger-injector-a holds 1 .*: each applies .*; outrigger-rbac-syncer-x \(leading\) holds 1 .*: it binds/);
    expect(both?.hint).toMatch(/^an injector that cannot watch namespaces .*; an rbac-syncer that cannot watch namespaces /);
  });

  it("judges no rbac-syncer view where its Lease publishes none, its holder no longer leads (the lease line fails for that), or its holder stamps no version (a leader of an older release keeps the view a crashed one left)", () => {
    const annotated = { ...SHOP, resourceVersion: '813' };
    const injectorReplicas = healthy.injectorReplicas.map((r) => ({ ...r, namespaces: { held: 1, digest: namespacesDigest([annotated]) } }));
    const { namespaces: _held, ...unpublished } = LEASE;
    const { version: _version, ...unstamped } = LEASE;
    for (const leases of [[unpublished], [{ ...LEASE, renewTime: new Date(NOW.getTime() - 60_000) }], [{ ...unpublished, holder: undefined }], [unstamped]]) {
      expect(checkLines({ ...healthy, labelledNamespaces: [annotated], injectorReplicas, leases }).find((l) => l.check === 'namespaces')).toMatchObject({ result: 'pass', message: '1 labelled: shop; every injector replica holds them as they are' });
    }
  });

  it('fails a profile that is refused or not synced, with the reason the status gives', () => {
    const refused = { ...PROFILE, accepted: { status: 'False', reason: 'Invalid', message: 'spec.container.image: is required (generation 2 stays in force)' } };
    expect(checkLines({ ...healthy, profiles: [refused] }).find((l) => l.check === 'profile xxl-job')?.message).toBe('generation 3 not accepted: Invalid: spec.container.image: is required (generation 2 stays in force)');
    const unsynced = { ...PROFILE, synced: { status: 'False', reason: 'ExecGuardMissing', message: 'kept empty' } };
    expect(checkLines({ ...healthy, profiles: [unsynced] }).find((l) => l.check === 'profile xxl-job')?.message).toBe('not synced: ExecGuardMissing: kept empty');
  });

  it('says which Pod Security level the agent meets, and fails an agent below the floor even where an older status says Accepted', () => {
    expect(checkLines(healthy).find((l) => l.check === 'profile xxl-job')?.message).toMatch(/; its agent meets Pod Security restricted$/);
    const { podSecurity: _level, ...stale } = PROFILE;
    const belowFloor = { ...stale, refusal: 'AgentProfile xxl-job: spec.container.securityContext.privileged: must not be true (Pod Security baseline; only spec.dangerouslyAllowPodSecurity: privileged accepts less)' };
    expect(checkLines({ ...healthy, profiles: [belowFloor] }).find((l) => l.check === 'profile xxl-job')).toMatchObject({
      result: 'fail',
      message: `generation 3 is refused by this version's profile schema, though its status says Accepted: ${belowFloor.refusal}`,
    });
  });

  it('warns, without failing, about a certificate expiring within 7 days and about no labelled namespace', () => {
    const soon = leafOf(3 * DAY);
    const lines = checkLines({
      ...healthy,
      labelledNamespaces: [],
      injectorReplicas: healthy.injectorReplicas.map((r) => ({ ...r, certificate: soon, namespaces: { held: 0, digest: namespacesDigest([]) } })),
      leases: [{ ...LEASE, namespaces: { held: 0, digest: namespacesDigest([]) } }],
    });
    expect(failed(lines)).toEqual([]);
    expect(lines.filter((l) => l.result === 'warn').map((l) => l.check)).toEqual(['certificate-expiry', 'namespaces']);
  });

  describe('policy-types', () => {
    const [guard, forged, optIn] = healthy.policyTypes as [PolicyTypesView, PolicyTypesView, PolicyTypesView];
    const typeLine = (policyTypes: PolicyTypesView[], state: Partial<InstallState> = {}) => checkLines({ ...healthy, ...state, policyTypes }).find((l) => l.check === 'policy-types');
    const MISTYPED = { fieldRef: 'spec.validations[0].expression', warning: "apps/v1, Kind=Pod: ERROR: <input>:1:46: undefined field 'initContainer'\n | !variables.carriesAgentName" };

    it('passes naming the policies Kubernetes typed without a warning, and those it types nothing of', () => {
      expect(typeLine([guard, forged, optIn])).toEqual({
        check: 'policy-types',
        result: 'pass',
        message: "Kubernetes types the validations of outrigger-forged-agent, outrigger-opt-in-missing without a warning; it types nothing of outrigger-exec-guard (rules with a wildcard or a subresource), which Outrigger's tests type on 1.30 and 1.36",
      });
      expect(typeLine([guard])?.message).toMatch(/^no shipped policy that Kubernetes types is present; it types nothing of outrigger-exec-guard/);
    });

    it('warns, without failing, naming each mistyped expression by policy, field and the first line of the warning, with the restore of its file', () => {
      const line = typeLine([guard, { ...forged, warnings: [MISTYPED, { fieldRef: 'spec.validations[0].messageExpression', warning: "ERROR: undefined field 'nme'" }] }, optIn]);
      expect(line).toMatchObject({
        result: 'warn',
        message: "Kubernetes finds 2 mistyped expression(s): outrigger-forged-agent spec.validations[0].expression: apps/v1, Kind=Pod: ERROR: <input>:1:46: undefined field 'initContainer'; outrigger-forged-agent spec.validations[0].messageExpression: ERROR: undefined field 'nme'",
      });
      expect(line?.hint).toMatch(/^a policy changed by hand is put back as shipped by outrigger restore --replace -f deploy\/base\/webhook\/forged-agent\.yaml; if it is as shipped, Kubernetes v1\.36\.0 types it unlike 1\.30 and 1\.36/);
      expect(checkLines({ ...healthy, policyTypes: [{ ...forged, warnings: [MISTYPED] }] }).filter((l) => l.result === 'fail')).toEqual([]);
    });

    it('on a Helm install, puts the policy back through Helm', () => {
      const line = typeLine([{ ...optIn, warnings: [MISTYPED] }], { install: { by: 'helm', release: 'outrigger', releaseNamespace: 'outrigger-system' } });
      expect(line?.hint).toMatch(/^a policy changed by hand is put back as shipped by helm upgrade outrigger <your chart> .* \(with --force-conflicts where it reports a conflict with a field changed by hand\);/);
    });

    it('warns while Kubernetes has not typed the current generation of a policy it types; a policy it types nothing of needs no status', () => {
      expect(typeLine([guard, { ...forged, warnings: undefined }, optIn])).toMatchObject({ result: 'warn', message: 'Kubernetes has not yet typed outrigger-forged-agent' });
      expect(typeLine([{ ...guard, warnings: undefined }, forged])?.result).toBe('pass');
    });
  });

  it('needs no exec guard when no profile binds cluster-wide, and the RoleBindings\' guard when a profile binds with RoleBindings', () => {
    const roleBinding = { ...PROFILE, bindingKind: 'RoleBinding' };
    const none = { ...shippedGuard('RoleBinding'), policy: undefined, binding: undefined };
    expect(checkLines({ ...healthy, profiles: [roleBinding], execGuard: NO_GUARD }).find((l) => l.check === 'exec-guard')?.result).toBe('pass');
    const line = checkLines({ ...healthy, profiles: [roleBinding], namespacedExecGuard: none }).find((l) => l.check === 'exec-guard-namespaced');
    expect(line).toMatchObject({ result: 'fail', fix: 'outrigger restore -f deploy/base/rbac-syncer/exec-guard.yaml' });
    expect(line?.message).toContain(`the rbac-syncer keeps the RoleBindings of ${PROFILE.name} empty`);
    expect(checkLines({ ...healthy, namespacedExecGuard: none }).find((l) => l.check === 'exec-guard-namespaced')?.result).toBe('pass');
  });
});

describe('checkLines: agents', () => {
  const row = (namespace: string, kind: string, name: string, counts: { current?: number; outdated?: number; missing?: number }) => {
    const c = { current: 0, outdated: 0, missing: 0, ...counts };
    return { workload: { kind, namespace, name, apiVersion: 'apps/v1', known: true }, profile: 'xxl-job', pods: c.current + c.outdated + c.missing, ...c, revisions: [] };
  };
  const withRows = (rows: ReturnType<typeof row>[], since: Date | null = new Date(NOW.getTime() - 30 * DAY)) =>
    checkLines({ ...healthy, agents: { profiles: [{ name: 'xxl-job', hash: 'aaaa', since: since ?? undefined }], specChangeLag: { ms: 300_000, from: 'the default' }, refused: [], pods: rows.reduce((n, r) => n + r.pods, 0), rows } });
  const line = (lines: CheckLine[], check: string) => lines.find((l) => l.check === check);

  it('fails opted-in pods without their agent, naming up to three workloads (most first) and the count, with a fix for just their namespace', () => {
    const lines = withRows([row('shop', 'Deployment', 'web', { missing: 3, current: 1 }), row('shop', 'StatefulSet', 'pg', { missing: 1 }), row('shop', 'DaemonSet', 'node', { missing: 2 }), row('shop', 'Pod', 'debug', { missing: 1 }), row('shop', 'Deployment', 'fine', { current: 5 })]);
    expect(line(lines, 'agents-missing')).toEqual({
      check: 'agents-missing',
      result: 'fail',
      message: '7 live opted-in pod(s) run without their agent, in 4 workload(s): shop/Deployment/web (3, xxl-job), shop/DaemonSet/node (2, xxl-job), shop/StatefulSet/pg (1, xxl-job), and 1 more',
      hint: expect.stringMatching(/bare pods, Jobs and CronJobs are skipped/),
      fix: 'outrigger rollout restart --missing -n shop',
    });
  });

  it('the fix covers all namespaces when the missing agents are in several', () => {
    expect(line(withRows([row('shop', 'Deployment', 'web', { missing: 1 }), row('db', 'StatefulSet', 'pg', { missing: 1 })]), 'agents-missing')?.fix).toBe('outrigger rollout restart --missing -A');
  });

  it('passes when every live opted-in pod carries its agent', () => {
    expect(line(withRows([row('shop', 'Deployment', 'web', { current: 3 })]), 'agents-missing')).toEqual({ check: 'agents-missing', result: 'pass', message: 'all 3 live opted-in pod(s) carry their agent' });
  });

  it('warns, without failing, about agents outdated more than 7 days after the spec in force came into force; not sooner', () => {
    const rows = [row('shop', 'Deployment', 'web', { outdated: 2, current: 1 })];
    const old = line(withRows(rows, new Date(NOW.getTime() - 8 * DAY)), 'agents-outdated');
    expect(old).toMatchObject({ result: 'warn', message: expect.stringMatching(/^2 pod\(s\) in 1 workload\(s\) still run an agent from an earlier spec, more than 7 days after the spec in force \(xxl-job aaaa since 2026-11-17T12:00:00.000Z\): shop\/Deployment\/web \(2, xxl-job\)$/) });
    expect(old?.hint).toMatch(/outrigger rollout restart --outdated -n shop/);
    expect(line(withRows(rows, new Date(NOW.getTime() - 6 * DAY)), 'agents-outdated')).toMatchObject({ result: 'pass', message: expect.stringMatching(/less than 7 days ago/) });
    expect(line(withRows(rows, null), 'agents-outdated')).toMatchObject({ result: 'warn', message: expect.stringMatching(/since unknown/) });
    expect(withRows(rows, new Date(NOW.getTime() - 8 * DAY)).filter((l) => l.result === 'fail')).toEqual([]);
  });

  it('says nothing of agents when the pods could not be read (that is a read error)', () => {
    expect(checkLines({ ...healthy, agents: undefined }).filter((l) => l.check.startsWith('agents'))).toEqual([]);
  });
});
