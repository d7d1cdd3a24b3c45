import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { repoRoot, resolveBinaries, DEPLOY_DIR, render, type RenderedObject } from '@outrigger/control-plane';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { COMPONENT, dashboard, matcherLabels, renderComponent, resolvePromtool, ruleGroups } from './observability.ts';

/* eslint-disable @typescript-eslint/no-explicit-any -- rendered manifests are untyped JSON */

const HERE = join(repoRoot(), 'tools', 'observability');
let kubectl: string;
let promtool: string;
let component: RenderedObject[];
/** The prod overlay with the component, as docs/observability.md tells users to compose it. */
let prod: RenderedObject[];
const dir = mkdtempSync(join(tmpdir(), 'outrigger-observability-'));

beforeAll(async () => {
  [kubectl, promtool] = await Promise.all([resolveBinaries().then((d) => join(d, 'kubectl')), resolvePromtool()]);
  component = renderComponent(kubectl);
  const overlay = mkdtempSync(join(dir, 'overlay-'));
  writeFileSync(
    join(overlay, 'kustomization.yaml'),
    stringify({
      apiVersion: 'kustomize.config.k8s.io/v1beta1',
      kind: 'Kustomization',
      namespace: 'outrigger-system',
      resources: [relative(overlay, join(DEPLOY_DIR, 'overlays/prod'))],
      components: [relative(overlay, join(DEPLOY_DIR, COMPONENT))],
    }),
  );
  prod = render(kubectl, relative(DEPLOY_DIR, overlay));
}, 600_000);

/** promtool's exit status and output. */
function runPromtool(args: readonly string[]): { status: number; output: string } {
  try {
    return { status: 0, output: execFileSync(promtool, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }) };
  } catch (error) {
    const e = error as { status?: number; stdout?: string; stderr?: string };
    return { status: e.status ?? 1, output: `${e.stdout ?? ''}${e.stderr ?? ''}` };
  }
}

/** The rendered PrometheusRule's groups as a rules file, with the unit tests beside it (they name rules.json). */
function writeRulesAndTests(): string {
  writeFileSync(join(dir, 'rules.json'), JSON.stringify({ groups: ruleGroups(component) }));
  copyFileSync(join(HERE, 'alerts.test.yaml'), join(dir, 'alerts.test.yaml'));
  return dir;
}

const alerts = () => ruleGroups(component).flatMap((g) => g.rules.filter((r) => r.alert));

describe(`deploy/${COMPONENT}`, () => {
  it('renders ServiceMonitors, one PrometheusRule and the dashboard ConfigMap, all in outrigger-system', () => {
    expect(component.map((o) => `${o.kind}/${o.metadata.name}`).sort()).toEqual([
      'ConfigMap/outrigger-dashboard',
      'PrometheusRule/outrigger',
      'ServiceMonitor/outrigger-cert-manager',
      'ServiceMonitor/outrigger-injector',
      'ServiceMonitor/outrigger-rbac-syncer',
    ]);
    for (const o of component) expect(o.metadata.namespace, o.metadata.name).toBe('outrigger-system');
  });

  it.each(['injector', 'rbac-syncer', 'cert-manager'])('with overlays/prod: the %s ServiceMonitor selects one Service, whose port leads to the container port serving /metrics', (app) => {
    const monitor = prod.find((o) => o.kind === 'ServiceMonitor' && o.metadata.name === `outrigger-${app}`) as any;
    const selected = prod.filter(
      (o) => o.kind === 'Service' && o.metadata.namespace === monitor.metadata.namespace && Object.entries(monitor.spec.selector.matchLabels).every(([k, v]) => o.metadata.labels?.[k] === v),
    ) as any[];
    expect(selected.map((s) => s.metadata.name)).toHaveLength(1);
    const [endpoint] = monitor.spec.endpoints;
    const port = selected[0].spec.ports.find((p: any) => p.name === endpoint.port);
    expect(port, `${app}: Service port ${endpoint.port}`).toBeDefined();
    const deployment = prod.find((o) => o.kind === 'Deployment' && o.metadata.name === `outrigger-${app}`) as any;
    const container = deployment.spec.template.spec.containers.find((c: any) => c.name === app);
    const containerPort = container.ports.find((p: any) => p.name === port.targetPort);
    expect(containerPort, `${app}: container port ${port.targetPort}`).toBeDefined();
    const env = Object.fromEntries(container.env.filter((e: any) => 'value' in e).map((e: any) => [e.name, e.value]));
    expect(env.PORT).toBe(String(containerPort.containerPort));
    // The injector serves /metrics over TLS: verified against the CA bundle in its serving Secret, by its Service name.
    const tls = app === 'injector' ? { scheme: 'https', tlsConfig: { serverName: `${selected[0].metadata.name}.outrigger-system.svc`, ca: { secret: { name: env.TLS_SECRET, key: 'ca.crt' } } } } : {};
    expect(endpoint).toEqual({ port: port.name, path: '/metrics', interval: '30s', ...tls });
  });

  it('promtool check rules accepts the PrometheusRule', () => {
    const result = runPromtool(['check', 'rules', join(writeRulesAndTests(), 'rules.json')]);
    expect(result.output).toMatch(/SUCCESS: \d+ rules found/);
    expect(result.status, result.output).toBe(0);
  });

  it('promtool test rules passes the alert unit tests', () => {
    const result = runPromtool(['test', 'rules', join(writeRulesAndTests(), 'alerts.test.yaml')]);
    expect(result.status, result.output).toBe(0);
  });

  it('every alert has a unit test in which it fires', () => {
    const tests = parse(readFileSync(join(HERE, 'alerts.test.yaml'), 'utf8')) as { tests: { alert_rule_test?: { alertname: string; exp_alerts: unknown[] }[] }[] };
    const fired = new Set(tests.tests.flatMap((t) => (t.alert_rule_test ?? []).filter((a) => a.exp_alerts.length > 0).map((a) => a.alertname)));
    expect([...new Set(alerts().map((a) => a.alert))].filter((name) => !fired.has(name ?? ''))).toEqual([]);
  });

  it('every alert has a severity, a summary, a description and a runbook hint pointing at its section of docs/observability.md', () => {
    const docs = readFileSync(join(repoRoot(), 'docs', 'observability.md'), 'utf8');
    const anchors = new Set([...docs.matchAll(/^#+ (.+)$/gm)].map((m) => (m[1] ?? '').toLowerCase().replace(/[^a-z0-9 -]/g, '').replace(/ /g, '-')));
    for (const alert of alerts()) {
      expect(['warning', 'critical'], alert.alert).toContain(alert.labels?.severity);
      expect(Object.keys(alert.annotations ?? {}).sort(), alert.alert).toEqual(['description', 'runbook', 'summary']);
      const anchor = /^docs\/observability\.md#(\S+)/.exec(alert.annotations?.runbook ?? '')?.[1];
      expect(anchor, alert.alert).toBe(alert.alert?.toLowerCase());
      expect(anchors, `docs/observability.md has no section ${alert.alert}`).toContain(anchor);
    }
  });

  it("reads the API server's webhook metrics for the webhook deploy/base/webhook registers", () => {
    const webhook = render(kubectl, 'base/webhook').find((o) => o.kind === 'MutatingWebhookConfiguration') as any;
    const names = webhook.webhooks.map((w: any) => w.name);
    const exprs = [...alerts().map((a) => a.expr), ...dashboard(component).panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr))].filter((e) => e.includes('apiserver_admission_webhook_'));
    expect(exprs.length).toBeGreaterThan(0);
    for (const expr of exprs) expect(names, expr).toContain(/name="([^"]+)"/.exec(expr)?.[1]);
    expect(matcherLabels(exprs, 'apiserver_admission_webhook_rejection_count')).toEqual(new Set(['name', 'error_type']));
  });

  it('the dashboard reads every panel from the chosen Prometheus data source, per namespace', () => {
    const d = dashboard(component);
    expect(d.uid).toBe('outrigger');
    const targets = d.panels.flatMap((p) => (p.targets ?? []).map((t) => ({ panel: p.title, ...t })));
    expect(targets.length).toBeGreaterThan(10);
    for (const t of targets) {
      expect(t.datasource?.uid, t.panel).toBe('${datasource}');
      for (const selector of t.expr.matchAll(/\b(outrigger_[a-z0-9_]+)\{([^}]*)\}/g)) expect(selector[2], `${t.panel}: ${selector[1]}`).toContain('namespace="$namespace"');
    }
    expect(d.templating.list.map((v) => v.name)).toEqual(['datasource', 'namespace']);
  });
});
