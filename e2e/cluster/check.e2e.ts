import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CERT_MANAGER_CONFINEMENT_NAME, execGuardName, FORGED_AGENT_POLICY_NAME, INSTALL_NAMES, OPT_IN_AFTER_CREATION_POLICY_NAME, OPT_IN_MISSING_POLICY_NAME, SYNCER_CONFINEMENT_NAME } from '@outrigger/install';
import { issueCertificate } from '@outrigger/pki';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { createNamespace, eventually, kubectl, kubectlJson, OUTRIGGER_NAMESPACE, outrigger, pods, scaleOutrigger } from './support.ts';

interface CheckLine {
  readonly check: string;
  readonly result: 'pass' | 'warn' | 'fail';
  readonly message: string;
  readonly hint?: string;
  readonly fix?: string;
}

interface CheckOutput {
  readonly ok: boolean;
  readonly checks: readonly CheckLine[];
}

function check(): { code: number; output: CheckOutput } {
  const result = outrigger(['check', '--output', 'json']);
  return { code: result.code, output: JSON.parse(result.stdout) as CheckOutput };
}

const checkOutput = (): CheckOutput => check().output;

const lineOf = (output: CheckOutput, name: string): CheckLine | undefined => output.checks.find((c) => c.check === name);

const failing = (output: CheckOutput) => output.checks.filter((c) => c.result === 'fail').map((c) => c.check);

/** Exactly the lines that must fail do, plus perhaps some of `alsoAllowed` (consequences of the same outage). */
function expectFailing(output: CheckOutput, required: readonly string[], alsoAllowed: readonly string[] = []): void {
  const failed = failing(output);
  expect(failed).toEqual(expect.arrayContaining([...required]));
  expect(failed.filter((c) => !required.includes(c) && !alsoAllowed.includes(c))).toEqual([]);
}

/** The environment of a process of pod `name` on this node (the kubelet sets HOSTNAME to the pod's name); its pid first. */
function podProcess(name: string): { pid: string; env: Map<string, string> } {
  for (const pid of readdirSync('/proc').filter((entry) => /^\d+$/.test(entry))) {
    let environ: string;
    try {
      environ = readFileSync(`/proc/${pid}/environ`, 'latin1');
    } catch {
      continue; // gone, or a kernel thread
    }
    const env = new Map(environ.split('\0').filter(Boolean).map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)] as [string, string]));
    if (env.get('HOSTNAME') === name && env.has('KUBERNETES_SERVICE_HOST')) return { pid, env };
  }
  throw new Error(`no process of pod ${name} on this node`);
}

/** Adds (-A) or deletes (-D) an iptables `rule` in the network namespace of process `pid` only (a pod's; see podProcess). */
function iptables(pid: string, op: '-A' | '-D', rule: readonly string[]): void {
  execFileSync('nsenter', ['-t', pid, '-n', 'iptables', '-w', op, ...rule], { stdio: ['ignore', 'pipe', 'pipe'] });
}

/** Waits until `outrigger check` passes again (the services repair what a test broke). */
async function healthy(): Promise<void> {
  await eventually(() => {
    const { code, output } = check();
    if (code !== 0) throw new Error(`still failing: ${output.checks.filter((c) => c.result === 'fail').map((c) => `${c.check}: ${c.message}`).join('; ')}`);
  }, '`outrigger check` to pass');
}

const WEBHOOK = 'mutatingwebhookconfiguration/outrigger-injector';
const REPO = join(import.meta.dirname, '..', '..');

/**
 * Runs a fix exactly as `outrigger check` printed it, from the repository root as a user would:
 * `outrigger …` through the CLI, `kubectl …` through kubectl, both against the suite's cluster.
 */
function runFix(fix: string): string {
  const [tool, ...args] = fix.split(' ');
  if (tool === 'outrigger') {
    const result = outrigger(args);
    if (result.code !== 0) throw new Error(`${fix}: exit ${result.code}: ${result.stderr}`);
    return result.stdout;
  }
  if (tool !== 'kubectl') throw new Error(`not a command to run: ${fix}`);
  const { kubeconfigPath, binDir } = inject('cluster');
  try {
    return execFileSync(join(binDir, 'kubectl'), ['--kubeconfig', kubeconfigPath, ...args], { cwd: REPO, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (error) {
    throw new Error(`${fix}: ${(error as { stderr?: string }).stderr ?? String(error)}`, { cause: error });
  }
}

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- objects read field by field

/**
 * What the overlay (deploy/overlays/local) decides and a careless fix would revert: the Deployments'
 * images and replicas, the services' roles (the local overlay patches the rbac-syncer's) and their
 * bindings, the injector's Service, the admission policies, each with its labels (the overlay's
 * instance label among them, which `outrigger restore` gives what it creates or replaces).
 */
function overlayObjects(): unknown {
  const labels = (o: Json) => o.metadata?.labels ?? {};
  const list = (args: string[]) => kubectlJson<{ items: Json[] }>(['get', ...args]).items;
  const ours = ['-l', 'app.kubernetes.io/part-of=outrigger'];
  const roles = (items: Json[]) => items.map((r) => ({ name: r.metadata.name, labels: labels(r), rules: r.rules }));
  const bindings = (items: Json[]) => items.map((b) => ({ name: b.metadata.name, labels: labels(b), roleRef: b.roleRef, subjects: b.subjects }));
  const specs = (items: Json[]) => items.map((o) => ({ name: o.metadata.name, labels: labels(o), spec: o.spec }));
  return {
    deployments: list(['deployments', '-n', OUTRIGGER_NAMESPACE]).map((d) => ({ name: d.metadata.name, replicas: d.spec.replicas, images: d.spec.template.spec.containers.map((c: Json) => c.image) })),
    clusterRoles: roles(list(['clusterroles', ...ours])),
    roles: roles(list(['roles', '-n', OUTRIGGER_NAMESPACE])),
    clusterRoleBindings: bindings(list(['clusterrolebindings', ...ours])),
    roleBindings: bindings(list(['rolebindings', '-n', OUTRIGGER_NAMESPACE])),
    services: list(['services', '-n', OUTRIGGER_NAMESPACE]).map((o) => ({ name: o.metadata.name, labels: labels(o), selector: o.spec.selector, ports: o.spec.ports })),
    policies: specs(list(['validatingadmissionpolicies', ...ours])),
    policyBindings: specs(list(['validatingadmissionpolicybindings', ...ours])),
  };
}

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
    expect(text.stdout).toMatch(/^ok {3}namespaces: \d+ labelled: .*; every injector replica and the rbac-syncer's leader hold them as they are$/m);
    // Every injector replica on /readyz and both leaders on their Leases report the version built into their image.
    const versions = text.stdout.match(/^ok {3}versions: this CLI and every running service are release (\S+) \((\S+): (.*)\)$/m);
    expect(versions?.[2]).toMatch(new RegExp(`^${versions?.[1]?.replaceAll('.', '\\.')}\\+[0-9a-f]{12}(\\.dirty)?$`));
    expect(versions?.[3]?.split(', ').map((who) => who.replace(/-[a-z0-9]+-[a-z0-9]+( \(leading\))?$/, '$1')).sort()).toEqual(['outrigger-cert-manager (leading)', 'outrigger-injector', 'outrigger-injector', 'outrigger-rbac-syncer (leading)']);
    for (const service of ['injector', 'rbac-syncer', 'cert-manager']) expect(text.stdout).toMatch(new RegExp(`^ok {3}rbac outrigger-${service}: ServiceAccount outrigger-system/outrigger-${service} may make all \\d+ kinds of request it needs`, 'm'));
    expect(text.stdout).toMatch(/\nall \d+ checks passed\n$/);
  });

  it('fails on a wrong caBundle, on an expired certificate and on the Secret gone while the cert-manager is down, and passes once it is back', async () => {
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
    // check reads no Secret: each replica's /readyz names what it refuses, while the last good certificate serves on.
    result = check();
    expect(result.code).toBe(1);
    expectFailing(result.output, ['served-certificate'], down);
    expect(lineOf(result.output, 'served-certificate')?.message).toMatch(/keeps serving \S+: Secret outrigger-system\/outrigger-injector-tls tls\.crt: the certificate expired at /);
    expect(lineOf(result.output, 'certificate-expiry')?.result).toBe('pass');

    // The Secret gone: the injectors serve on, and say so.
    kubectl(['delete', 'secret', '-n', OUTRIGGER_NAMESPACE, 'outrigger-injector-tls']);
    result = await eventually(() => {
      const now = check();
      if (!/Secret outrigger-system\/outrigger-injector-tls is gone/.test(lineOf(now.output, 'served-certificate')?.message ?? '')) throw new Error(`served-certificate: ${lineOf(now.output, 'served-certificate')?.message}`);
      return now;
    }, 'check to see the Secret gone', 30_000);
    expect(result.code).toBe(1);
    expectFailing(result.output, ['served-certificate'], down);

    await scaleOutrigger('outrigger-cert-manager', 2);
    await healthy();
  });

  it('fails when the injector is down: no ready endpoint, and pod creation would fail', async () => {
    await scaleOutrigger('outrigger-injector', 0);
    const result = check();
    expect(result.code).toBe(1);
    // With no replica to report a certificate, neither the caBundle nor the expiry can be judged.
    expectFailing(result.output, ['injector-endpoints', 'deployment outrigger-injector', 'ca-bundle', 'served-certificate', 'certificate-expiry']);
    await scaleOutrigger('outrigger-injector', 2);
    await healthy();
  });

  it.each<[string, () => void, string]>([
    ["the injector's RoleBinding deleted", () => kubectl(['delete', 'rolebinding', '-n', OUTRIGGER_NAMESPACE, INSTALL_NAMES.injector]), `rbac ${INSTALL_NAMES.injector}`],
    ["the cert-manager's RoleBinding deleted", () => kubectl(['delete', 'rolebinding', '-n', OUTRIGGER_NAMESPACE, INSTALL_NAMES.certManager]), `rbac ${INSTALL_NAMES.certManager}`],
    ["the rbac-syncer's ClusterRoleBinding deleted", () => kubectl(['delete', 'clusterrolebinding', INSTALL_NAMES.rbacSyncer]), `rbac ${INSTALL_NAMES.rbacSyncer}`],
    ['the exec guard policy deleted', () => kubectl(['delete', 'validatingadmissionpolicy', INSTALL_NAMES.execGuard]), 'exec-guard'],
    ['the exec guard binding deleted', () => kubectl(['delete', 'validatingadmissionpolicybinding', INSTALL_NAMES.execGuard]), 'exec-guard'],
    [
      'the exec guard binding changed to only warn',
      () => kubectl(['patch', 'validatingadmissionpolicybinding', INSTALL_NAMES.execGuard, '--type=merge', '-p', JSON.stringify({ spec: { validationActions: ['Warn'] } })]),
      'exec-guard',
    ],
    [
      "the exec guard's CEL rewritten to allow everything (it exists, fails closed and denies)",
      () => kubectl(['patch', 'validatingadmissionpolicy', INSTALL_NAMES.execGuard, '--type=json', '-p', JSON.stringify([{ op: 'replace', path: '/spec/validations/1/expression', value: 'true' }])]),
      'exec-guard',
    ],
    ['the syncer confinement policy deleted', () => kubectl(['delete', 'validatingadmissionpolicy', SYNCER_CONFINEMENT_NAME]), 'syncer-confinement'],
    [
      'the syncer confinement binding changed to only audit',
      () => kubectl(['patch', 'validatingadmissionpolicybinding', SYNCER_CONFINEMENT_NAME, '--type=merge', '-p', JSON.stringify({ spec: { validationActions: ['Audit'] } })]),
      'syncer-confinement',
    ],
    ['the forged-agent policy binding deleted', () => kubectl(['delete', 'validatingadmissionpolicybinding', FORGED_AGENT_POLICY_NAME]), 'forged-agent'],
    ["the cert-manager's confinement policy deleted", () => kubectl(['delete', 'validatingadmissionpolicy', CERT_MANAGER_CONFINEMENT_NAME]), 'cert-manager-confinement'],
    ["the injector's Service deleted", () => kubectl(['delete', 'service', '-n', OUTRIGGER_NAMESPACE, INSTALL_NAMES.injector]), 'webhook'],
  ])('%s: fails its line, and the fix it prints, run as printed, repairs it and leaves the overlay as it was', async (_fault, fault, check) => {
    await healthy();
    const before = overlayObjects();
    fault();
    const line = await eventually(() => {
      const found = checkOutput().checks.find((c) => c.check === check);
      if (found?.result !== 'fail' || !found.fix) throw new Error(`${check}: ${JSON.stringify(found)}`);
      return found;
    }, `the ${check} line to fail with a fix`);
    expect(line.fix).not.toMatch(/ -k deploy\/(base|overlays)\//);
    runFix(line.fix ?? '');
    await healthy();
    expect(overlayObjects()).toEqual(before);
  });

  it("policy-types: passes on Kubernetes' own type check of the shipped policies; one changed into a mistyped expression warns naming policy, field and word, and the restore its hint names puts it back", async () => {
    await healthy();
    const typeLine = (result: CheckLine['result']) =>
      eventually(() => {
        const line = lineOf(checkOutput(), 'policy-types');
        if (line?.result !== result) throw new Error(`policy-types: ${JSON.stringify(line)}`);
        return line;
      }, `the policy-types line to ${result}`);
    const untyped = [execGuardName('ClusterRoleBinding'), execGuardName('RoleBinding'), SYNCER_CONFINEMENT_NAME, CERT_MANAGER_CONFINEMENT_NAME];
    const typed = `Kubernetes types the validations of ${FORGED_AGENT_POLICY_NAME}, ${OPT_IN_MISSING_POLICY_NAME}, ${OPT_IN_AFTER_CREATION_POLICY_NAME} without a warning`;
    expect((await typeLine('pass')).message).toBe(`${typed}; it types nothing of ${untyped.join(', ')} (rules with a wildcard or a subresource), which Outrigger's tests type on 1.30 and 1.36`);

    const before = overlayObjects();
    // Untyped at admission, has() of a misspelt field is false: the policy refuses as before, and only the type check sees it.
    const mistyped = [
      { op: 'test', path: '/spec/validations/0/expression', value: '!variables.carriesAgentName' },
      { op: 'replace', path: '/spec/validations/0/expression', value: '!variables.carriesAgentName && !has(object.spec.initContainer)' },
    ];
    kubectl(['patch', 'validatingadmissionpolicy', FORGED_AGENT_POLICY_NAME, '--type=json', '-p', JSON.stringify(mistyped)]);
    const warned = await typeLine('warn');
    expect(warned.message).toMatch(new RegExp(`^Kubernetes finds 1 mistyped expression\\(s\\): ${FORGED_AGENT_POLICY_NAME} spec\\.validations\\[0\\]\\.expression: .*undefined field 'initContainer'$`));
    expect(check().code, 'a warning fails nothing').toBe(0);
    const restore = /by (outrigger restore --replace -f \S+);/.exec(warned.hint ?? '')?.[1];
    expect(restore).toBe('outrigger restore --replace -f deploy/base/webhook/forged-agent.yaml');
    runFix(restore ?? '');
    expect((await typeLine('pass')).message).toMatch(new RegExp(`^${typed};`));
    expect(overlayObjects()).toEqual(before);
  });

  it("fails the namespaces line naming the injector replica and the rbac-syncer leader that cannot watch them, the leader's view read from its Lease with its port closed to the API server, and passes once they can again", async () => {
    const live = (name: string) => pods(OUTRIGGER_NAMESPACE, `app.kubernetes.io/name=${name}`).filter((p) => !p.metadata.deletionTimestamp).map((p) => p.metadata.name);
    const [stalled, other] = live('outrigger-injector');
    expect(other, 'the suite runs two injector replicas').toBeDefined();
    const holder = kubectl(['get', 'lease', '-n', OUTRIGGER_NAMESPACE, INSTALL_NAMES.rbacSyncer, '-o', 'jsonpath={.spec.holderIdentity}']);
    const syncers = live('outrigger-rbac-syncer');
    const leader = syncers.find((name) => holder.startsWith(`${name}_`));
    const follower = syncers.find((name) => name !== leader);
    expect(leader && follower, `two rbac-syncer replicas, one holding the Lease (${holder})`).toBeTruthy();
    // The first rule of the syncer's ClusterRole lists and watches pods and namespaces (deploy/base/rbac-syncer/rbac.yaml).
    const firstRule = (from: readonly string[], to: readonly string[]) => {
      const patch = [{ op: 'test', path: '/rules/0/resources', value: from }, { op: 'replace', path: '/rules/0/resources', value: to }];
      kubectl(['patch', 'clusterrole', INSTALL_NAMES.rbacSyncer, '--type=json', '-p', JSON.stringify(patch)]);
    };
    const namespace = createNamespace('check-lag');
    const added: Array<{ pid: string; rule: string[] }> = [];
    let revoked = false;
    try {
      const injector = podProcess(stalled ?? '');
      // In that pod's network namespace only: nothing from the API server reaches it, and its own connections to it are reset, so its watches end and cannot start again.
      const [host, port] = [injector.env.get('KUBERNETES_SERVICE_HOST') ?? '', injector.env.get('KUBERNETES_SERVICE_PORT') ?? ''];
      for (const rule of [
        ['INPUT', '-s', host, '-p', 'tcp', '--sport', port, '-j', 'DROP'],
        ['OUTPUT', '-d', host, '-p', 'tcp', '--dport', port, '-j', 'REJECT', '--reject-with', 'tcp-reset'],
      ]) {
        iptables(injector.pid, '-A', rule);
        added.push({ pid: injector.pid, rule });
      }
      // The leader keeps leading but cannot list namespaces again: the syncer may no longer, and its connections are aborted, so its namespace watch starts over.
      firstRule(['pods', 'namespaces'], ['pods']);
      revoked = true;
      const syncerAccount = `system:serviceaccount:${OUTRIGGER_NAMESPACE}:${INSTALL_NAMES.rbacSyncer}`;
      // `can-i` answers no with exit code 1: the API server's authorizer has taken the change in.
      await eventually(() => expect(() => kubectl(['auth', 'can-i', 'watch', 'namespaces', '--as', syncerAccount])).toThrow(), 'the rbac-syncer to be refused watching namespaces');
      const syncer = podProcess(leader ?? '');
      // As an enforced NetworkPolicy of the network-policy component does: the API server cannot read the syncers' /readyz.
      for (const { pid } of [syncer, podProcess(follower ?? '')]) {
        const rule = ['INPUT', '-p', 'tcp', '--dport', '8080', '-j', 'DROP'];
        iptables(pid, '-A', rule);
        added.push({ pid, rule });
      }
      execFileSync('nsenter', ['-t', syncer.pid, '-n', 'ss', '-K', 'dst', host, 'dport', '=', `:${port}`], { stdio: ['ignore', 'pipe', 'pipe'] });
      kubectl(['annotate', 'namespace', namespace, 'example.com/changed=yes']);
      await eventually(() => {
        const line = checkOutput().checks.find((c) => c.check === 'namespaces');
        expect(line).toMatchObject({ result: 'fail', message: expect.stringContaining(`but ${stalled} holds `) });
        expect(line?.message).toContain(`; ${leader} (leading) holds `);
        expect(line?.message).not.toContain(other);
        expect(line?.message).not.toContain(follower);
        expect(line?.hint).toMatch(/^an injector that cannot watch namespaces keeps the last ones it saw: see its logs.*; an rbac-syncer that cannot watch namespaces is restarted/);
      }, 'the namespaces line to name the stalled replica and the leader', 60_000);
      expect(kubectl(['get', 'lease', '-n', OUTRIGGER_NAMESPACE, INSTALL_NAMES.rbacSyncer, '-o', 'jsonpath={.spec.holderIdentity}']), 'the same leader all along').toBe(holder);
      firstRule(['pods'], ['pods', 'namespaces']);
      revoked = false;
      for (const { pid, rule } of added.splice(0, 2)) iptables(pid, '-D', rule);
      await eventually(() => {
        expect(checkOutput().checks.find((c) => c.check === 'namespaces')).toMatchObject({ result: 'pass', message: expect.stringMatching(/; every injector replica and the rbac-syncer's leader hold them as they are$/) });
      }, "the namespaces line to pass, the leader's view still read from its Lease", 120_000);
    } finally {
      if (revoked) firstRule(['pods'], ['pods', 'namespaces']);
      for (const { pid, rule } of added) iptables(pid, '-D', rule);
    }
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
