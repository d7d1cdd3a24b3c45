import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { get as httpsGet } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadProfilesFile, REFERENCE_PROFILE_FILE } from '@outrigger/agent-profiles';
import { injectManifests } from '@outrigger/sidecar';
import { freePort, servedFingerprint, startApp, type AppName, type ManagedProcess, DEPLOY_DIR, INSTALL_NAMESPACE, render, poll, suiteKubectl } from '@outrigger/control-plane';
import { issueCertificate } from '@outrigger/pki';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parse, stringify } from 'yaml';

/**
 * The built cert-manager, injector and rbac-syncer, each authenticated as its own ServiceAccount (a
 * TokenRequest token, no admin credentials) with only the RBAC from deploy/base: they do their
 * job. Together with the SubjectAccessReview matrix this shows the shipped RBAC is enough, and
 * not more than enough.
 */
const { kubeconfigPath, binDir } = inject('controlPlane');
const kubectlBin = join(binDir, 'kubectl');
const { kubectl, getJson, established } = suiteKubectl(kubeconfigPath, binDir);
const ns = INSTALL_NAMESPACE;
const dir = mkdtempSync(join(tmpdir(), 'outrigger-deploy-e2e-'));
// RBAC, and the exec guard the rbac-syncer needs in force before it binds anyone cluster-wide.
const RBAC_KINDS = new Set(['ServiceAccount', 'Role', 'RoleBinding', 'ClusterRole', 'ClusterRoleBinding', 'ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding']);
const apps: ManagedProcess[] = [];

/** A kubeconfig for the same API server that authenticates as the ServiceAccount only. */
function serviceAccountKubeconfig(serviceAccount: string): string {
  const token = kubectl(['create', 'token', serviceAccount, '-n', ns, '--duration=1h']).trim();
  const admin = parse(readFileSync(kubeconfigPath, 'utf8')) as { clusters: unknown[]; contexts: { context: { cluster: string } }[] };
  const cluster = admin.contexts[0]?.context.cluster;
  const path = join(dir, `${serviceAccount}.kubeconfig`);
  writeFileSync(
    path,
    stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: admin.clusters,
      users: [{ name: serviceAccount, user: { token } }],
      contexts: [{ name: serviceAccount, context: { cluster, user: serviceAccount, namespace: ns } }],
      'current-context': serviceAccount,
    }),
  );
  return path;
}

async function run(name: AppName, env: Record<string, string>): Promise<void> {
  const port = await freePort();
  apps.push(
    await startApp(name, {
      env: { ...env, PORT: String(port), POD_NAMESPACE: ns, LOG_FORMAT: 'text' },
      readyUrl: `http://127.0.0.1:${port}/readyz`,
      logFile: join(dir, `${name}.log`),
      timeoutMs: 60_000,
    }),
  );
}

/** GET /readyz over TLS, trusting `ca` for `servername`. */
function fetchReadyz(port: number, ca: string, servername: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const request = httpsGet({ host: '127.0.0.1', port, path: '/readyz', ca, servername }, (response) => {
      let body = '';
      response.setEncoding('utf8').on('data', (chunk: string) => (body += chunk)).on('end', () => resolve(body));
    });
    request.on('error', reject);
  });
}

beforeAll(async () => {
  kubectl(['apply', '--server-side', '-k', join(DEPLOY_DIR, 'base/namespace')]);
  // The AgentProfile API and the reference profile, which both services read through it.
  kubectl(['apply', '--server-side', '-k', join(DEPLOY_DIR, 'base/crd')]);
  await established(['agentprofiles.outrigger.dev']);
  kubectl(['apply', '--server-side', '--field-manager=outrigger-deploy-test', '-k', join(DEPLOY_DIR, 'base/profiles')]);
  for (const path of ['base/rbac-syncer', 'base/cert-manager', 'base/injector']) {
    const rbac = render(kubectlBin, path).filter((o) => RBAC_KINDS.has(o.kind));
    kubectl(['apply', '--server-side', '--field-manager=outrigger-deploy-test', '-f', '-'], rbac.map((o) => stringify(o)).join('---\n'));
  }
  // The shipped webhook configuration, without caBundle: the cert-manager must fill it in.
  kubectl(['apply', '--server-side', '--field-manager=outrigger-deploy-test', '-k', join(DEPLOY_DIR, 'base/webhook')]);
});

afterAll(async () => {
  await Promise.all(apps.map((app) => app.stop()));
  kubectl(['delete', '--ignore-not-found', '-k', join(DEPLOY_DIR, 'base/webhook')]);
});

describe('the services run with exactly the ServiceAccounts and RBAC from deploy/', () => {
  it('cert-manager as system:serviceaccount:outrigger-system:outrigger-cert-manager issues both Secrets and fills in the caBundle', async () => {
    const deployment = render(kubectlBin, 'base/cert-manager').find((o) => o.kind === 'Deployment') as unknown as {
      spec: { template: { spec: { containers: { env: { name: string; value?: string }[] }[] } } };
    };
    // The Deployment's own settings, so the run matches what is shipped.
    const env = deployment.spec.template.spec.containers.flatMap((c) => c.env);
    const shipped = Object.fromEntries(env.flatMap((e) => (e.value === undefined ? [] : [[e.name, e.value]])));
    await run('cert-manager', { ...shipped, POD_NAME: 'cert-manager-deploy-e2e', KUBECONFIG: serviceAccountKubeconfig('outrigger-cert-manager') });
    const serving = await poll('the serving Secret', () => getJson(['secret', 'outrigger-injector-tls', '-n', ns]));
    expect(Object.keys(serving.data)).toEqual(expect.arrayContaining(['tls.crt', 'tls.key']));
    expect(getJson(['secret', 'outrigger-webhook-ca', '-n', ns])).toBeDefined();
    const caBundle = await poll('the caBundle', () => getJson(['mutatingwebhookconfiguration', 'outrigger-injector'])?.webhooks?.[0]?.clientConfig?.caBundle as string | undefined);
    expect(Buffer.from(caBundle, 'base64').toString('utf8')).toContain('-----BEGIN CERTIFICATE-----');
    // Its Events: about the Secrets beside them, about the cluster-scoped webhook configuration in `default`.
    const recorded = (namespace: string, kind: string) => getJson(['events', '-n', namespace, '--field-selector', `involvedObject.kind=${kind},reportingComponent=outrigger-cert-manager`])?.items?.length > 0 || undefined;
    await poll('an Event about a Secret', () => recorded(ns, 'Secret'));
    await poll('an Event about the webhook configuration', () => recorded('default', 'MutatingWebhookConfiguration'));
    expect(readFileSync(join(dir, 'cert-manager.log'), 'utf8')).not.toMatch(/could not record/);
  });

  it('injector as system:serviceaccount:outrigger-system:outrigger-injector serves the leaf it watches in its Secret, not the stale mounted one, and reads the AgentProfiles', async () => {
    const secret = await poll('the serving Secret', () => getJson(['secret', 'outrigger-injector-tls', '-n', ns]));
    const fromSecret = new X509Certificate(Buffer.from(secret.data['tls.crt'], 'base64').toString('utf8')).fingerprint256;
    // Files standing in for a mounted Secret the kubelet has not refreshed yet: another certificate.
    const staleCa = issueCertificate({ commonName: 'stale-ca', usage: 'ca', lifetimeMs: 3_600_000 });
    const serviceName = `outrigger-injector.${ns}.svc`;
    const stale = issueCertificate({ commonName: 'stale', usage: 'server', issuer: staleCa, lifetimeMs: 3_600_000, dnsNames: [serviceName] });
    writeFileSync(join(dir, 'stale.crt'), stale.cert);
    writeFileSync(join(dir, 'stale.key'), stale.key);
    const port = await freePort();
    apps.push(
      await startApp('injector', {
        env: {
          PORT: String(port),
          POD_NAMESPACE: ns,
          TLS_CERT_FILE: join(dir, 'stale.crt'),
          TLS_KEY_FILE: join(dir, 'stale.key'),
          TLS_SECRET: 'outrigger-injector-tls',
          KUBECONFIG: serviceAccountKubeconfig('outrigger-injector'),
        },
        readyUrl: `https://127.0.0.1:${port}/readyz`,
        // Either certificate may be served by the time the injector reports ready.
        ca: staleCa.cert + Buffer.from(secret.data['ca.crt'], 'base64').toString('utf8'),
        servername: serviceName,
        logFile: join(dir, 'injector.log'),
      }),
    );
    const deadline = Date.now() + 30_000;
    let fingerprint = '';
    while (fingerprint !== fromSecret && Date.now() < deadline) {
      fingerprint = await servedFingerprint(port).catch(() => '');
      if (fingerprint !== fromSecret) await new Promise((r) => setTimeout(r, 200));
    }
    expect(fingerprint).toBe(fromSecret);
    // Ready means the AgentProfiles were listed (with the ClusterRole of deploy/base/injector).
    const readyz = await fetchReadyz(port, staleCa.cert + Buffer.from(secret.data['ca.crt'], 'base64').toString('utf8'), serviceName);
    expect(JSON.parse(readyz).details.profiles).toEqual({ status: 'up', source: 'AgentProfiles', names: ['xxl-job'], generations: { 'xxl-job': expect.any(Number) }, version: expect.stringMatching(/^\d+\.\d+\.\d+\+dev$/) });
    expect(readFileSync(join(dir, 'injector.log'), 'utf8')).not.toMatch(/forbidden/i);
  });

  it('rbac-syncer as system:serviceaccount:outrigger-system:outrigger-rbac-syncer passes its own permission check, writes its profile ClusterRole and binds the ServiceAccount of an opted-in pod', async () => {
    await run('rbac-syncer', { KUBECONFIG: serviceAccountKubeconfig('outrigger-rbac-syncer') });
    const role = await poll('ClusterRole xxl-agent-exec', () => getJson(['clusterrole', 'xxl-agent-exec']));
    expect(role.rules.length).toBeGreaterThan(0);
    // An opted-in pod in a labelled namespace: its ServiceAccount gets bound (escalate/bind/patch in use).
    const team = 'deploy-e2e-team';
    kubectl(['create', 'namespace', team]);
    kubectl(['label', 'namespace', team, 'outrigger.dev/injection=enabled']);
    kubectl(['create', 'serviceaccount', 'agent', '-n', team]);
    const annotations = { 'xxl-agent/enable': 'true', 'xxl-agent/job-addr': 'http://admin:8080', 'xxl-agent/target-container': 'app', 'xxl-agent/job-name': 'e2e' };
    const plain = stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'app', annotations }, spec: { serviceAccountName: 'agent', containers: [{ name: 'app', image: 'busybox' }] } });
    // Only a pod that carries the injected agent is bound: inject it offline (the webhook's own code).
    const profiles = await loadProfilesFile(REFERENCE_PROFILE_FILE);
    if (!profiles.ok) throw new Error(profiles.error);
    const injected = injectManifests(plain, { profiles: profiles.value, injectorVersion: 'e2e', defaultNamespace: team });
    if (!injected.ok) throw new Error(injected.error);
    const pod = injected.value.yaml;
    // The shipped webhook (failurePolicy Fail) now matches this namespace and no injector runs
    // here: the pod is refused rather than created without its agent.
    expect(() => kubectl(['create', '-n', team, '-f', '-'], pod)).toThrow(/failed calling webhook "inject.outrigger.dev"/);
    kubectl(['delete', '-k', join(DEPLOY_DIR, 'base/webhook')]);
    kubectl(['create', '-n', team, '-f', '-'], pod);
    const subjects = await poll('the agent bound', () => {
      const list = getJson(['clusterrolebinding', `xxl-agent-exec.${team}`])?.subjects as { kind: string; name: string; namespace?: string }[] | undefined;
      return list?.some((s) => s.kind === 'ServiceAccount' && s.name === 'agent' && s.namespace === team) ? list : undefined;
    });
    expect(subjects).toContainEqual(expect.objectContaining({ kind: 'ServiceAccount', name: 'agent', namespace: team }));
    // What it did, on the AgentProfile's status (patched through agentprofiles/status, nothing more).
    const status = await poll('the AgentProfile status', () => {
      const s = getJson(['agentprofile', 'xxl-job'])?.status;
      return s?.boundSubjects >= 1 ? s : undefined;
    });
    expect(status.conditions).toEqual([
      expect.objectContaining({ type: 'Accepted', status: 'True', reason: 'Valid' }),
      expect.objectContaining({ type: 'Synced', status: 'True', reason: 'Synced' }),
    ]);
  });
});
