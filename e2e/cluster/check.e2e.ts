import { issueCertificate } from '@outrigger/pki';
import { beforeAll, describe, expect, it } from 'vitest';
import { createNamespace, eventually, kubectl, kubectlJson, OUTRIGGER_NAMESPACE, outrigger, scaleOutrigger } from './support.ts';

interface CheckOutput {
  readonly ok: boolean;
  readonly checks: readonly { readonly check: string; readonly result: 'pass' | 'warn' | 'fail'; readonly message: string }[];
}

function check(): { code: number; output: CheckOutput } {
  const result = outrigger(['check', '--output', 'json']);
  return { code: result.code, output: JSON.parse(result.stdout) as CheckOutput };
}

const failing = (output: CheckOutput) => output.checks.filter((c) => c.result === 'fail').map((c) => c.check);

/** Exactly the lines that must fail do, plus perhaps some of `alsoAllowed` (consequences of the same outage). */
function expectFailing(output: CheckOutput, required: readonly string[], alsoAllowed: readonly string[] = []): void {
  const failed = failing(output);
  expect(failed).toEqual(expect.arrayContaining([...required]));
  expect(failed.filter((c) => !required.includes(c) && !alsoAllowed.includes(c))).toEqual([]);
}

/** Waits until `outrigger check` passes again (the services repair what a test broke). */
async function healthy(): Promise<void> {
  await eventually(() => {
    const { code, output } = check();
    if (code !== 0) throw new Error(`still failing: ${output.checks.filter((c) => c.result === 'fail').map((c) => `${c.check}: ${c.message}`).join('; ')}`);
  }, '`outrigger check` to pass');
}

const WEBHOOK = 'mutatingwebhookconfiguration/outrigger-injector';

/** `outrigger check` on the real install: all pass, then each way of breaking it fails the line that says so. */
describe('outrigger check', () => {
  beforeAll(() => {
    createNamespace('check'); // at least one labelled namespace, whatever ran before
  });

  it('passes every line on a healthy install, and prints them as text too', async () => {
    await healthy();
    const text = outrigger(['check']);
    expect(text.code).toBe(0);
    // The suite's Kubernetes is the documented minimum or newer (MINIMUM_KUBERNETES in the CLI).
    expect(text.stdout).toMatch(/^ok {3}kubernetes-version: v1\.\d+\.\d+/m);
    expect(text.stdout).toMatch(/^ok {3}ca-bundle: the webhook's caBundle verifies the serving certificate/m);
    expect(text.stdout).toMatch(/^ok {3}profile xxl-job: generation \d+ in force in both services/m);
    for (const service of ['injector', 'rbac-syncer', 'cert-manager']) expect(text.stdout).toMatch(new RegExp(`^ok {3}rbac outrigger-${service}: ServiceAccount outrigger-system/outrigger-${service} may make all \\d+ kinds of request it needs`, 'm'));
    expect(text.stdout).toMatch(/\nall \d+ checks passed\n$/);
  });

  it('fails on a wrong caBundle and on an expired certificate while the cert-manager is down, and passes once it is back', async () => {
    await scaleOutrigger('outrigger-cert-manager', 0);
    const original = kubectl(['get', WEBHOOK, '-o', 'jsonpath={.webhooks[0].clientConfig.caBundle}']);
    const stranger = issueCertificate({ commonName: 'not-outrigger', usage: 'ca', lifetimeMs: 86_400_000, keyBits: 1024 });
    const setBundle = (b64: string) => kubectl(['patch', WEBHOOK, '--type=json', '-p', JSON.stringify([{ op: 'replace', path: '/webhooks/0/clientConfig/caBundle', value: b64 }])]);
    setBundle(Buffer.from(stranger.cert).toString('base64'));
    // The cert-manager's own lines fail too (no replica, its Lease released); the rest must not.
    const down = ['deployment outrigger-cert-manager', 'lease outrigger-cert-manager'];
    let result = check();
    expect(result.code).toBe(1);
    expectFailing(result.output, ['ca-bundle', 'deployment outrigger-cert-manager'], down);

    // A leaf that expired yesterday, signed by the real CA: the injectors refuse it and keep serving the last good one.
    setBundle(original);
    const caSecret = kubectlJson<{ data: Record<string, string> }>(['get', 'secret', '-n', OUTRIGGER_NAMESPACE, 'outrigger-webhook-ca']);
    const decode = (k: string) => Buffer.from(caSecret.data[k] ?? '', 'base64').toString('utf8');
    const expired = issueCertificate({
      commonName: 'outrigger-injector.outrigger-system.svc',
      usage: 'server',
      issuer: { cert: decode('ca.crt'), key: decode('ca.key') },
      dnsNames: ['outrigger-injector.outrigger-system.svc'],
      lifetimeMs: 86_400_000,
      now: new Date(Date.now() - 2 * 86_400_000),
    });
    const data = { 'tls.crt': Buffer.from(expired.cert).toString('base64'), 'tls.key': Buffer.from(expired.key).toString('base64') };
    kubectl(['patch', 'secret', '-n', OUTRIGGER_NAMESPACE, 'outrigger-injector-tls', '--type=merge', '-p', JSON.stringify({ data })]);
    result = check();
    expect(result.code).toBe(1);
    expectFailing(result.output, ['served-certificate', 'certificate-expiry'], down);

    await scaleOutrigger('outrigger-cert-manager', 2);
    await healthy();
  });

  it('fails when the injector is down: no ready endpoint, and pod creation would fail', async () => {
    await scaleOutrigger('outrigger-injector', 0);
    const result = check();
    expect(result.code).toBe(1);
    expectFailing(result.output, ['injector-endpoints', 'deployment outrigger-injector', 'served-certificate'], ['certificate-expiry']);
    await scaleOutrigger('outrigger-injector', 2);
    await healthy();
  });

  it("fails when a service's RBAC is missing, naming what it may not do, and passes once it is re-applied", async () => {
    const binding = kubectlJson<{ metadata: Record<string, unknown> }>(['get', 'rolebinding', '-n', OUTRIGGER_NAMESPACE, 'outrigger-injector']);
    kubectl(['delete', 'rolebinding', '-n', OUTRIGGER_NAMESPACE, 'outrigger-injector']);
    await eventually(() => {
      const { code, output } = check();
      expect(code).toBe(1);
      expect(output.checks.find((c) => c.check === 'rbac outrigger-injector')?.message).toMatch(/may not get secrets in namespace outrigger-system named outrigger-injector-tls/);
      expectFailing(output, ['rbac outrigger-injector']);
    }, 'the missing RBAC to be reported');
    const { name, namespace, labels, annotations } = binding.metadata;
    kubectl(['create', '-f', '-'], JSON.stringify({ ...binding, metadata: { name, namespace, labels, annotations } }));
    await healthy();
  });

  it('fails when the exec guard is deleted, and passes once it is re-applied', async () => {
    const binding = kubectlJson<{ metadata: Record<string, unknown> }>(['get', 'validatingadmissionpolicybinding', 'outrigger-agent-exec-guard']);
    kubectl(['delete', 'validatingadmissionpolicybinding', 'outrigger-agent-exec-guard']);
    await eventually(() => {
      const { code, output } = check();
      expect(code).toBe(1);
      // The rbac-syncer notices too, and says so on the profiles that bind cluster-wide.
      expectFailing(output, ['exec-guard', 'profile xxl-job', 'profile xxl-job-native']);
    }, 'the guard to be reported missing');
    const { name, labels, annotations } = binding.metadata;
    kubectl(['create', '-f', '-'], JSON.stringify({ ...binding, metadata: { name, labels, annotations } }));
    await healthy();
  });

  it('fails when the services differ on a profile (the rbac-syncer has not seen its latest generation)', async () => {
    await scaleOutrigger('outrigger-rbac-syncer', 0);
    const patch = (memory: string) => kubectl(['patch', 'agentprofile', 'xxl-job-native', '--type=json', '-p', JSON.stringify([{ op: 'replace', path: '/spec/container/resources/limits/memory', value: memory }])]);
    patch('129Mi');
    await eventually(() => {
      const { code, output } = check();
      expect(code).toBe(1);
      expect(output.checks.find((c) => c.check === 'profile xxl-job-native')).toMatchObject({ result: 'fail', message: expect.stringMatching(/^the rbac-syncer has seen generation \d+, the object is at \d+$/) });
      expectFailing(output, ['profile xxl-job-native', 'deployment outrigger-rbac-syncer'], ['lease outrigger-rbac-syncer']);
    }, 'the profile line to fail');
    patch('128Mi');
    await scaleOutrigger('outrigger-rbac-syncer', 2);
    await healthy();
  });
});
