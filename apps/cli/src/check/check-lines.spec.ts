import { issueCertificate, parseCertificate } from '@outrigger/pki';
import { describe, expect, it } from 'vitest';
import { checkLines, type CheckLine } from './check-lines.js';
import type { InstallState } from './install-state.js';

const NOW = new Date('2026-11-25T12:00:00Z');
const DAY = 86_400_000;
const ca = issueCertificate({ commonName: 'outrigger-webhook-ca', usage: 'ca', lifetimeMs: 365 * DAY, now: NOW, keyBits: 1024 });
const otherCa = issueCertificate({ commonName: 'someone-else', usage: 'ca', lifetimeMs: 365 * DAY, now: NOW, keyBits: 1024 });
function leafOf(lifetimeMs: number) {
  const parsed = parseCertificate(issueCertificate({ commonName: 'outrigger-injector.outrigger-system.svc', usage: 'server', issuer: ca, lifetimeMs, now: NOW, keyBits: 1024 }).cert);
  if (!parsed) throw new Error('the test leaf does not parse');
  return parsed;
}
const leaf = leafOf(30 * DAY);

const WEBHOOK = { name: 'outrigger-injector', caBundle: ca.cert, service: { namespace: 'outrigger-system', name: 'outrigger-injector', port: 443 }, serviceExists: true, readyEndpoints: 2 };
const LEASE = { name: 'outrigger-rbac-syncer', holder: 'outrigger-rbac-syncer-x', renewTime: new Date(NOW.getTime() - 2_000), durationSeconds: 15 };
const PROFILE = {
  name: 'xxl-job',
  generation: 3,
  observedGeneration: 3,
  bindingKind: 'ClusterRoleBinding',
  accepted: { status: 'True', reason: 'Valid', message: 'generation 3 is in force' },
  synced: { status: 'True', reason: 'Synced', message: 'ClusterRoleBinding xxl-agent-exec binds 4 ServiceAccount(s) to ClusterRole xxl-agent-exec' },
  podSecurity: 'restricted' as const,
};

const healthy: InstallState = {
  namespace: 'outrigger-system',
  now: NOW,
  serverVersion: 'v1.36.0',
  crd: { established: true },
  webhook: WEBHOOK,
  deployments: [
    { name: 'outrigger-injector', desired: 2, available: 2 },
    { name: 'outrigger-rbac-syncer', desired: 2, available: 2 },
  ],
  serviceAccess: [
    { deployment: 'outrigger-injector', component: 'injector', serviceAccount: 'outrigger-injector', reviewed: 5, missing: [] },
    { deployment: 'outrigger-rbac-syncer', component: 'rbac-syncer', serviceAccount: 'outrigger-rbac-syncer', reviewed: 18, missing: [] },
  ],
  servingSecret: { name: 'outrigger-injector-tls', certificate: leaf },
  injectorReplicas: [
    { pod: 'outrigger-injector-a', ready: true, fingerprint256: leaf.fingerprint256, notAfter: leaf.notAfter, generations: { 'xxl-job': 3 } },
    { pod: 'outrigger-injector-b', ready: true, fingerprint256: leaf.fingerprint256, notAfter: leaf.notAfter, generations: { 'xxl-job': 3 } },
  ],
  leases: [LEASE],
  profiles: [PROFILE],
  labelledNamespaces: ['shop'],
  execGuard: { policies: ['outrigger-agent-exec-guard'], bindings: [{ name: 'outrigger-agent-exec-guard', actions: ['Deny'] }] },
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
      'profile xxl-job',
      'namespaces',
      'exec-guard',
    ]);
  });

  it.each<[string, Partial<InstallState>, string[]]>([
    ['a caBundle of another CA', { webhook: { ...WEBHOOK, caBundle: otherCa.cert } }, ['ca-bundle']],
    ['no ready injector', { webhook: { ...WEBHOOK, readyEndpoints: 0 }, deployments: [{ name: 'outrigger-injector', desired: 2, available: 0 }] }, ['injector-endpoints', 'deployment outrigger-injector']],
    ['no webhook configuration', { webhook: undefined }, ['webhook', 'injector-endpoints', 'ca-bundle']],
    [
      'an expired certificate in the Secret that the injectors refuse',
      { servingSecret: { name: 'outrigger-injector-tls', certificate: leafOf(-DAY) } },
      ['served-certificate', 'certificate-expiry'],
    ],
    ['the exec guard deleted', { execGuard: { policies: ['outrigger-agent-exec-guard'], bindings: [] } }, ['exec-guard']],
    ['a stale Lease', { leases: [{ ...LEASE, renewTime: new Date(NOW.getTime() - 60_000) }] }, ['lease outrigger-rbac-syncer']],
    ['the CRD missing', { crd: undefined }, ['crd']],
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

  it.each<[string, Partial<InstallState>, string, string]>([
    ['the guard policy deleted', { execGuard: { policies: [], bindings: [{ name: 'outrigger-agent-exec-guard', actions: ['Deny'] }] } }, 'exec-guard', 'outrigger restore -f deploy/base/rbac-syncer/exec-guard.yaml'],
    ['the guard binding deleted', { execGuard: { policies: ['outrigger-agent-exec-guard'], bindings: [] } }, 'exec-guard', 'outrigger restore -f deploy/base/rbac-syncer/exec-guard.yaml'],
    [
      'the guard binding changed to warn',
      { execGuard: { policies: ['outrigger-agent-exec-guard'], bindings: [{ name: 'outrigger-agent-exec-guard', actions: ['Warn'] }] } },
      'exec-guard',
      'kubectl replace -f deploy/base/rbac-syncer/exec-guard.yaml',
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
  ])('for %s, fixes by creating only what is missing or putting back the shipped guard', (_what, broken, check, fix) => {
    expect(checkLines({ ...healthy, ...broken }).find((l) => l.check === check)).toMatchObject({ result: 'fail', fix });
  });

  it('never hints to apply a base or an overlay over an install: that reverts the overlay (images, replicas, patches)', () => {
    const broken: Partial<InstallState>[] = [
      { webhook: undefined },
      { profiles: [] },
      { deployments: [] },
      { execGuard: { policies: [], bindings: [] } },
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
      servingSecret: { name: 'outrigger-injector-tls', certificate: soon },
      injectorReplicas: healthy.injectorReplicas.map((r) => ({ ...r, fingerprint256: soon.fingerprint256, notAfter: soon.notAfter })),
    });
    expect(failed(lines)).toEqual([]);
    expect(lines.filter((l) => l.result === 'warn').map((l) => l.check)).toEqual(['certificate-expiry', 'namespaces']);
  });

  it('needs no exec guard when no profile binds cluster-wide', () => {
    const roleBinding = { ...PROFILE, bindingKind: 'RoleBinding' };
    expect(checkLines({ ...healthy, profiles: [roleBinding], execGuard: { policies: [], bindings: [] } }).find((l) => l.check === 'exec-guard')?.result).toBe('pass');
  });
});
