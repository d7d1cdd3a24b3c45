import { join } from 'node:path';
import { resolveToolDir, runBuildScript, render, type RenderedObject } from '@outrigger/control-plane';

/** The kustomize component, relative to deploy/. */
export const COMPONENT = 'components/observability';
const BUILD_SCRIPT = 'tools/observability/prometheus/build.sh';

/** Prometheus's target labels (and the Prometheus Operator's): never a label of our own metrics. */
export const TARGET_LABELS = ['service', 'job', 'instance', 'namespace', 'pod', 'container', 'endpoint'];

export interface Rule {
  readonly alert?: string;
  readonly record?: string;
  readonly expr: string;
  readonly for?: string;
  readonly labels?: Record<string, string>;
  readonly annotations?: Record<string, string>;
}
export interface RuleGroup {
  readonly name: string;
  readonly rules: readonly Rule[];
}
interface Panel {
  readonly title?: string;
  readonly datasource?: { readonly uid?: string };
  readonly targets?: readonly { readonly expr: string; readonly datasource?: { readonly uid?: string } }[];
}
export interface Dashboard {
  readonly uid: string;
  readonly panels: readonly Panel[];
  readonly templating: { readonly list: readonly { readonly name: string; readonly definition?: string }[] };
}

/** promtool, built from the Go module pinned in tools/observability/prometheus (or from OUTRIGGER_PROMTOOL_BIN). */
export async function resolvePromtool(): Promise<string> {
  return join(await resolveToolDir('OUTRIGGER_PROMTOOL_BIN', BUILD_SCRIPT, ['promtool']), 'promtool');
}

/** The directory holding the ServiceMonitor and PrometheusRule CRDs of the pinned Prometheus Operator. */
export function prometheusOperatorCrds(): Promise<string> {
  return runBuildScript(BUILD_SCRIPT, ['crds']);
}

export function renderComponent(kubectl: string): RenderedObject[] {
  return render(kubectl, COMPONENT);
}

export function ruleGroups(objects: readonly RenderedObject[]): RuleGroup[] {
  return objects.filter((o) => o.kind === 'PrometheusRule').flatMap((o) => (o.spec as { groups: RuleGroup[] }).groups);
}

export function dashboard(objects: readonly RenderedObject[]): Dashboard {
  const configMap = objects.find((o) => o.kind === 'ConfigMap' && o.metadata.labels?.grafana_dashboard === '1') as { data: Record<string, string> } | undefined;
  if (!configMap) throw new Error(`${COMPONENT} renders no ConfigMap labelled grafana_dashboard: "1"`);
  return JSON.parse(Object.values(configMap.data)[0] ?? '') as Dashboard;
}

/** Every PromQL expression of the rules and of the dashboard (panels and variables). */
export function expressions(objects: readonly RenderedObject[]): string[] {
  const d = dashboard(objects);
  return [
    ...ruleGroups(objects).flatMap((g) => g.rules.map((r) => r.expr)),
    ...d.panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr)),
    ...d.templating.list.flatMap((v) => (v.definition ? [v.definition] : [])),
  ];
}

/** Metric names with `prefix` the expressions read (recording rules, `outrigger:…`, are not metrics). */
export function metricNames(exprs: readonly string[], prefix: string): Set<string> {
  return new Set(exprs.flatMap((e) => [...e.matchAll(new RegExp(`\\b${prefix}[a-zA-Z0-9_]*`, 'g'))].map((m) => m[0])));
}

/** The label names `expr` matches on for `metric`: `metric{a="x", b!~"y"}` gives a and b. */
export function matcherLabels(exprs: readonly string[], metric: string): Set<string> {
  const selectors = exprs.flatMap((e) => [...e.matchAll(new RegExp(`\\b${metric}\\{([^}]*)\\}`, 'g'))].map((m) => m[1] ?? ''));
  return new Set(selectors.flatMap((s) => [...s.matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)\s*(?:=~|!~|!=|=)/g)].map((m) => m[1] ?? '')));
}
