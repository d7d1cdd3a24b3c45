import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { get as httpsGet } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REFERENCE_PROFILE_FILE } from '@outrigger/agent-profiles';
import { freePort, startApp, type AppName, type ManagedProcess, DEPLOY_DIR, poll, suiteKubectl } from '@outrigger/control-plane';
import { issueCertificate } from '@outrigger/pki';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parse, stringify } from 'yaml';
import {
  COMPONENT,
  TARGET_LABELS,
  expressions,
  matcherLabels,
  metricNames,
  prometheusOperatorCrds,
  renderComponent,
  resolvePromtool,
} from './observability.ts';
import { parseExposition, sampleNames, type Exposition } from './exposition.ts';

/**
 * The three built services against the suite's API server, in a namespace of their own: what the
 * alert rules and the dashboard read must be what they, and the API server, really export.
 */
const { kubeconfigPath, binDir } = inject('controlPlane');
const kubectlBin = join(binDir, 'kubectl');
const { kubectl, established } = suiteKubectl(kubeconfigPath, binDir);
const ns = 'outrigger-observability-e2e';
const dir = mkdtempSync(join(tmpdir(), 'outrigger-observability-e2e-'));
const WEBHOOKS = 'outrigger-observability-e2e';
const PROFILE = 'observability-e2e';
const apps: ManagedProcess[] = [];
const metricsUrls = new Map<AppName, string>();
const ca = issueCertificate({ commonName: 'observability-e2e-ca', usage: 'ca', lifetimeMs: 86_400_000 });

/** GET over http, or https trusting the test CA. */
function get(url: string): Promise<string> {
  if (url.startsWith('http:')) return fetch(url).then((r) => r.text());
  return new Promise((resolve, reject) => {
    httpsGet(url, { ca: ca.cert }, (response) => {
      let body = '';
      response.setEncoding('utf8').on('data', (chunk: string) => (body += chunk)).on('end', () => resolve(body));
    }).on('error', reject);
  });
}

async function start(name: AppName, env: Record<string, string>, scheme: 'http' | 'https' = 'http'): Promise<void> {
  const port = await freePort();
  apps.push(
    await startApp(name, {
      env: { ...env, PORT: String(port), POD_NAMESPACE: ns },
      readyUrl: `${scheme}://127.0.0.1:${port}/healthz`,
      ca: ca.cert,
      logFile: join(dir, `${name}.log`),
      timeoutMs: 60_000,
    }),
  );
  metricsUrls.set(name, `${scheme}://127.0.0.1:${port}/metrics`);
}

beforeAll(async () => {
  kubectl(['create', 'namespace', ns]);
  kubectl(['label', 'namespace', ns, `${WEBHOOKS}=true`]);
  // No controller-manager here creates it, and pod admission looks it up before calling webhooks.
  kubectl(['create', 'serviceaccount', 'default', '-n', ns]);
  // The reference profile under names of its own, binding per namespace: no clash with other suites' ClusterRoles.
  const profile = parse(readFileSync(REFERENCE_PROFILE_FILE, 'utf8'));
  profile.metadata.name = PROFILE;
  profile.spec.rbac = { ...profile.spec.rbac, clusterRole: `${PROFILE}-exec`, binding: { kind: 'RoleBinding', name: `${PROFILE}-exec` } };
  writeFileSync(join(dir, 'profiles.yaml'), stringify(profile));
  const leaf = issueCertificate({ commonName: '127.0.0.1', usage: 'server', issuer: ca, lifetimeMs: 86_400_000, ipAddresses: ['127.0.0.1'] });
  writeFileSync(join(dir, 'tls.crt'), leaf.cert);
  writeFileSync(join(dir, 'tls.key'), leaf.key);
  await start('cert-manager', { KUBECONFIG: kubeconfigPath, POD_NAME: 'observability-e2e' });
  await start('rbac-syncer', { KUBECONFIG: kubeconfigPath, PROFILES_FILE: join(dir, 'profiles.yaml') });
  await start('injector', { PROFILES_FILE: join(dir, 'profiles.yaml'), TLS_CERT_FILE: join(dir, 'tls.crt'), TLS_KEY_FILE: join(dir, 'tls.key') }, 'https');
}, 300_000);

afterAll(async () => {
  await Promise.all(apps.map((app) => app.stop()));
  kubectl(['delete', '--ignore-not-found', 'mutatingwebhookconfiguration', WEBHOOKS]);
  kubectl(['delete', '--ignore-not-found', '--wait=false', 'namespace', ns]);
  kubectl(['delete', '--ignore-not-found', 'clusterrole', `${PROFILE}-exec`]);
});

/** Each service's /metrics, once it has something to say about its certificates and its Lease. */
async function scrapeAll(): Promise<Map<AppName, string>> {
  const ready: Record<AppName, RegExp> = {
    'cert-manager': /^outrigger_cert_manager_leaf_expiry_timestamp_seconds \d+/m,
    'rbac-syncer': /^outrigger_rbac_syncer_leader 1$/m,
    injector: /^outrigger_injector_serving_certificate_expiry_timestamp_seconds \d+/m,
  };
  const scrapes = new Map<AppName, string>();
  for (const [name, url] of metricsUrls) scrapes.set(name, await poll(`${name} metrics`, async () => ((await get(url)).match(ready[name]) ? get(url) : undefined), 60_000));
  return scrapes;
}

describe('metrics the component reads are the metrics the services export', () => {
  it('every outrigger_* metric in the alert rules and the dashboard is exported; no series carries a target label; promtool lints none of ours', async () => {
    const component = renderComponent(kubectlBin);
    const scrapes = await scrapeAll();
    const exported = new Set([...scrapes.values()].flatMap((text) => [...sampleNames(parseExposition(text).types)]));
    const referenced = metricNames(expressions(component), 'outrigger_');
    expect(referenced.size).toBeGreaterThan(20);
    expect([...referenced].filter((name) => !exported.has(name))).toEqual([]);

    const promtool = await resolvePromtool();
    for (const [name, text] of scrapes) {
      const clashing = parseExposition(text).samples.filter((s) => Object.keys(s.labels).some((l) => TARGET_LABELS.includes(l)));
      expect(clashing, name).toEqual([]);
      // promtool exits 1 on any finding, the Node.js runtime metrics' included: only ours must be clean.
      let lint = '';
      try {
        execFileSync(promtool, ['check', 'metrics'], { input: text, encoding: 'utf8', stdio: ['pipe', 'pipe', 'pipe'] });
      } catch (error) {
        lint = `${(error as { stdout?: string }).stdout ?? ''}${(error as { stderr?: string }).stderr ?? ''}`;
      }
      expect(lint.split('\n').filter((l) => l.startsWith('outrigger_')), name).toEqual([]);
    }
  });

  it("the API server exports the apiserver_admission_webhook_* metrics and labels the rules read, once it has called, failed to call and failed open on a webhook", async () => {
    const injectorMetrics = metricsUrls.get('injector') ?? '';
    const closed = await freePort();
    const webhook = (name: string, port: number, failurePolicy: 'Fail' | 'Ignore') => ({
      name: `${name}.${WEBHOOKS}.outrigger.dev`,
      admissionReviewVersions: ['v1'],
      clientConfig: { url: `https://127.0.0.1:${port}/mutate`, caBundle: Buffer.from(ca.cert).toString('base64') },
      rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'], scope: 'Namespaced' }],
      namespaceSelector: { matchLabels: { [WEBHOOKS]: 'true' } },
      failurePolicy,
      sideEffects: 'None',
      timeoutSeconds: 5,
    });
    // Called in order: answered, then skipped (Ignore), then refused (Fail).
    const configuration = {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'MutatingWebhookConfiguration',
      metadata: { name: WEBHOOKS },
      webhooks: [webhook('ok', Number(new URL(injectorMetrics).port), 'Fail'), webhook('open', closed, 'Ignore'), webhook('down', closed, 'Fail')],
    };
    kubectl(['apply', '--server-side', '-f', '-'], JSON.stringify(configuration));
    const pod = stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'probe', namespace: ns }, spec: { containers: [{ name: 'app', image: 'busybox' }] } });
    // The API server picks up webhook configurations asynchronously.
    let last = '';
    await poll('the API server to call the webhooks', async () => {
      try {
        last = kubectl(['create', '--dry-run=server', '-f', '-'], pod);
        return undefined;
      } catch (error) {
        last = (error as Error).message;
        return /failed calling webhook "down\./.test(last) ? true : undefined;
      }
    }, 60_000).catch((e: Error) => Promise.reject(new Error(`${e.message}; last: ${last}`)));

    const exposition: Exposition = parseExposition(kubectl(['get', '--raw', '/metrics']));
    const exprs = expressions(renderComponent(kubectlBin));
    const referenced = metricNames(exprs, 'apiserver_admission_webhook_');
    expect([...referenced].sort()).toEqual([
      'apiserver_admission_webhook_admission_duration_seconds_bucket',
      'apiserver_admission_webhook_fail_open_count',
      'apiserver_admission_webhook_rejection_count',
    ]);
    const exported = sampleNames(exposition.types);
    for (const metric of referenced) {
      expect(exported, metric).toContain(metric);
      const labels = new Set(exposition.samples.filter((s) => s.name === metric).flatMap((s) => Object.keys(s.labels)));
      expect([...matcherLabels(exprs, metric)].filter((l) => !labels.has(l)), `${metric} has no such label`).toEqual([]);
    }
  });

  it('the component passes a server-side dry-run against the Prometheus Operator CRDs', async () => {
    const crds = await prometheusOperatorCrds();
    kubectl(['apply', '--server-side', '-f', crds]);
    try {
      await established(['servicemonitors.monitoring.coreos.com', 'prometheusrules.monitoring.coreos.com']);
      kubectl(['apply', '--server-side', '-k', join(DEPLOY_DIR, 'base/namespace')]);
      const out = kubectl(['apply', '--server-side', '--dry-run=server', '-k', join(DEPLOY_DIR, COMPONENT)]);
      expect(out.trim().split('\n').sort()).toEqual([
        'configmap/outrigger-dashboard serverside-applied (server dry run)',
        'prometheusrule.monitoring.coreos.com/outrigger serverside-applied (server dry run)',
        'servicemonitor.monitoring.coreos.com/outrigger-cert-manager serverside-applied (server dry run)',
        'servicemonitor.monitoring.coreos.com/outrigger-injector serverside-applied (server dry run)',
        'servicemonitor.monitoring.coreos.com/outrigger-rbac-syncer serverside-applied (server dry run)',
      ]);
    } finally {
      kubectl(['delete', '--ignore-not-found', '-f', crds]);
    }
  });
});
