import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { parseAllDocuments, parseDocument, stringify } from 'yaml';
import { INJECTION_LABEL_KEY, INJECTION_LABEL_VALUE } from '@outrigger/admission';
import { INSTALL_NAMES, INSTANCE_LABEL, MINIMUM_KUBERNETES } from '@outrigger/install';
import { DEPLOY_DIR, repoRoot, type RenderedObject } from '@outrigger/control-plane';
import { readReleaseVersion } from '../release/release-version.ts';
import { checkHookObjects } from './check-hook.ts';
import { uninstallHookObjects } from './uninstall-hook.ts';

/**
 * The Helm chart deploy/helm/outrigger, generated from the Kustomize overlays (one source): the
 * prod overlay with every combination of the optional components, rendered by kustomize, each object
 * templated by the combinations it appears in, and the values below put in place of their fields.
 */
export const CHART_DIR = join(DEPLOY_DIR, 'helm', 'outrigger');
/** The chart's version and appVersion: the release version (tools/release). */
export const CHART_VERSION = readReleaseVersion(repoRoot());

/** The optional components, each switched by `<value>.enabled`, in the order of the variant key. */
export const TOGGLES = [
  { value: 'mutualTLS', component: 'components/webhook-mutual-tls' },
  { value: 'jetstack', component: 'components/jetstack-cert-manager' },
  { value: 'observability', component: 'components/observability' },
] as const;
export type Toggle = (typeof TOGGLES)[number]['value'];

/** The services, whose image and replicas are values, by their image's last path segment. */
const SERVICES = { injector: 'injector', 'rbac-syncer': 'rbacSyncer', 'cert-manager': 'certManager' } as const;
type ServiceKey = (typeof SERVICES)[keyof typeof SERVICES];
/** Every image that is a value: the services' and the reference profile's agent. */
const IMAGES = { ...SERVICES, 'xxl-agent': 'xxlAgent' } as const;
type ImageKey = (typeof IMAGES)[keyof typeof IMAGES];
/** The images a release publishes, by their last path segment. */
export const RELEASE_IMAGES = Object.keys(IMAGES) as readonly (keyof typeof IMAGES)[];

export const key = (o: RenderedObject) => `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`;

/** `kubectl kustomize` of the prod overlay with the given components added. */
export function renderVariant(kubectl: string, enabled: ReadonlySet<Toggle>): RenderedObject[] {
  const dir = mkdtempSync(join(tmpdir(), 'outrigger-helm-'));
  try {
    // Kustomize takes only relative paths to other kustomizations.
    const deploy = relative(dir, DEPLOY_DIR);
    const components = TOGGLES.filter((t) => enabled.has(t.value)).map((t) => `${deploy}/${t.component}`);
    // prod's labels (its installation) do not reach objects a component adds out here: given again, from prod.
    const { labels } = parseDocument(readFileSync(join(DEPLOY_DIR, 'overlays/prod/kustomization.yaml'), 'utf8')).toJS() as { labels?: unknown };
    writeFileSync(join(dir, 'kustomization.yaml'), stringify({ resources: [`${deploy}/overlays/prod`], components, labels }));
    const out = execFileSync(kubectl, ['kustomize', dir], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    return parseAllDocuments(out).map((doc) => {
      if (doc.errors.length > 0) throw doc.errors[0];
      return doc.toJS() as RenderedObject;
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Every combination of the toggles, as its variant key ("010": jetstack alone) and its set. */
export function variants(): { readonly id: string; readonly enabled: ReadonlySet<Toggle> }[] {
  return Array.from({ length: 2 ** TOGGLES.length }, (_, n) => {
    const bits = TOGGLES.map((_, i) => (n >> (TOGGLES.length - 1 - i)) & 1);
    return { id: bits.join(''), enabled: new Set(TOGGLES.filter((_, i) => bits[i] === 1).map((t) => t.value)) };
  });
}

interface Image {
  readonly repository: string;
  readonly tag: string;
  readonly digest: string;
}
export interface ChartValues {
  readonly createNamespace: boolean;
  readonly referenceProfile: { readonly enabled: boolean };
  readonly mutualTLS: { readonly enabled: boolean };
  readonly jetstack: { readonly enabled: boolean };
  readonly observability: { readonly enabled: boolean };
  readonly webhook: { readonly failurePolicy: string };
  readonly images: Record<ImageKey, Image>;
  readonly replicas: Record<ServiceKey, number>;
}

const PLACEHOLDER = (n: number) => `OUTRIGGER_HELM_VALUE_${n}`;
/** Where a generated object says the release's namespace (`{{ .Release.Namespace }}` in the chart). */
const RELEASE_NAMESPACE = 'OUTRIGGER_HELM_RELEASE_NAMESPACE';

interface Container {
  image?: string;
}

/** Puts placeholders in the fields that are values; returns the object's YAML with them filled in. */
function templated(object: RenderedObject, values: { images: Partial<Record<ImageKey, Image>>; replicas: Partial<Record<ServiceKey, number>>; failurePolicy?: string }): string {
  const copy = structuredClone(object) as RenderedObject & Record<string, unknown>;
  const fills: string[] = [];
  const hole = (template: string) => PLACEHOLDER(fills.push(template) - 1);
  // The overlay names its installation; a chart's installation is its release (Helm users select by it).
  const labels = copy.metadata.labels as Record<string, string> | undefined;
  if (labels?.[INSTANCE_LABEL] !== undefined) labels[INSTANCE_LABEL] = hole('{{ .Release.Name }}');
  // The services' Deployments, and the hooks' Job and Pod, which run the rbac-syncer's image.
  if (copy.kind === 'Deployment' || copy.kind === 'Job' || copy.kind === 'Pod') {
    const spec = copy.spec as { replicas?: number; containers?: Container[]; template?: { spec: { containers: Container[] } } };
    for (const container of spec.template?.spec.containers ?? spec.containers ?? []) {
      const match = /^(.+\/(injector|rbac-syncer|cert-manager)):([^@]+)$/.exec(container.image ?? '');
      if (!match) continue;
      const service = SERVICES[match[2] as keyof typeof SERVICES];
      values.images[service] = { repository: match[1] as string, tag: match[3] as string, digest: '' };
      container.image = hole(`{{ include "outrigger.image" .Values.images.${service} }}`);
      if (spec.replicas !== undefined) {
        values.replicas[service] = spec.replicas;
        spec.replicas = hole(`{{ .Values.replicas.${service} }}`) as unknown as number;
      }
    }
  }
  if (copy.kind === 'AgentProfile') {
    const container = (copy.spec as { container: Container }).container;
    const match = /^(.+\/xxl-agent):([^@]+)$/.exec(container.image ?? '');
    if (match) {
      values.images.xxlAgent = { repository: match[1] as string, tag: match[2] as string, digest: '' };
      container.image = hole('{{ include "outrigger.image" .Values.images.xxlAgent }}');
    }
  }
  if (copy.kind === 'MutatingWebhookConfiguration') {
    for (const webhook of copy.webhooks as { failurePolicy?: string }[]) {
      values.failurePolicy = webhook.failurePolicy;
      webhook.failurePolicy = hole('{{ .Values.webhook.failurePolicy }}');
    }
  }
  // What the objects say in Go template syntax (alert annotations, the dashboard) stays as it is.
  const text = stringify(copy, { lineWidth: 0 }).replace(/\{\{|\}\}/g, (m) => `{{ "${m}" }}`);
  return text.replace(/OUTRIGGER_HELM_VALUE_(\d+)/g, (_, n: string) => fills[Number(n)] as string).replaceAll(RELEASE_NAMESPACE, '{{ .Release.Namespace }}');
}

/** The chart's files (path relative to the chart → content) from the rendered variants. */
export function chartFiles(renders: ReadonlyMap<string, readonly RenderedObject[]>): Map<string, string> {
  const collected: Parameters<typeof templated>[1] = { images: {}, replicas: {} };
  const files = new Map<string, string>();
  const byObject = new Map<string, { object: RenderedObject; texts: Map<string, string[]> }>();
  for (const [variant, objects] of renders) {
    for (const object of objects) {
      if (object.kind === 'CustomResourceDefinition') {
        files.set(`crds/${object.metadata.name}.yaml`, stringify(object, { lineWidth: 0 }));
        continue;
      }
      const entry = byObject.get(key(object)) ?? { object, texts: new Map<string, string[]>() };
      byObject.set(key(object), entry);
      const text = templated(object, collected);
      entry.texts.set(text, [...(entry.texts.get(text) ?? []), variant]);
    }
  }
  // Helm hooks are not part of the overlay: generated here, kept apart from its objects.
  const syncer = renders.get(variants()[0]?.id as string)?.find((o) => o.kind === 'Deployment' && o.metadata.name === INSTALL_NAMES.rbacSyncer);
  if (!syncer) throw new Error(`the prod overlay has no Deployment ${INSTALL_NAMES.rbacSyncer}`);
  for (const object of [...uninstallHookObjects(syncer), ...checkHookObjects(syncer, RELEASE_NAMESPACE)]) {
    files.set(`templates/hooks/${[object.kind, object.metadata.name].join('-').toLowerCase()}.yaml`, `${GENERATED}${templated(object, collected)}`);
  }
  const all = renders.size;
  for (const [, { object, texts }] of [...byObject].sort(([a], [b]) => a.localeCompare(b))) {
    const branches = [...texts].map(([text, ids]) => ({ text, condition: ids.length === all ? undefined : `has (include "outrigger.variant" .) (list ${ids.map((id) => `"${id}"`).join(' ')})` }));
    let body = branches.length === 1 && !branches[0]?.condition
      ? (branches[0]?.text as string)
      : `${branches.map((b, i) => `{{- ${i === 0 ? 'if' : 'else if'} ${b.condition} }}\n${b.text}`).join('')}{{- end }}\n`;
    if (object.kind === 'AgentProfile') body = `{{- if .Values.referenceProfile.enabled }}\n${body}{{- end }}\n`;
    if (object.kind === 'Namespace') body = `{{- if .Values.createNamespace }}\n${body}{{- end }}\n`;
    const name = [object.kind, object.metadata.namespace, object.metadata.name].filter(Boolean).join('-').toLowerCase();
    files.set(`templates/${name}.yaml`, `${GENERATED}${body}`);
  }
  const values = chartValues(collected);
  files.set('values.yaml', `${GENERATED}${VALUES_COMMENT}${stringify(values)}`);
  files.set('values.schema.json', `${JSON.stringify(valuesSchema(values), null, 2)}\n`);
  files.set('Chart.yaml', `${GENERATED}${stringify(CHART_YAML)}`);
  files.set('templates/_helpers.tpl', HELPERS);
  files.set('templates/NOTES.txt', NOTES);
  return files;
}

/** values.yaml with the images pinned to the digests of digests.env (`<app>=<repository>@sha256:…` per line). */
export function pinDigests(valuesYaml: string, digestsEnv: string): string {
  const values = parseDocument(valuesYaml);
  const pinned = new Set<string>();
  for (const line of digestsEnv.split('\n').filter((l) => l.trim() !== '')) {
    const match = /^([\w-]+)=([^@\s]+)@(sha256:[0-9a-f]{64})$/.exec(line.trim());
    const service = match ? (IMAGES[match[1] as keyof typeof IMAGES] as ImageKey | undefined) : undefined;
    if (!match || !service) throw new Error(`digests: ${JSON.stringify(line)} is not <${Object.keys(IMAGES).join('|')}>=<repository>@sha256:<64 hex>`);
    values.setIn(['images', service, 'repository'], match[2]);
    values.setIn(['images', service, 'digest'], match[3]);
    pinned.add(service);
  }
  const missing = Object.values(IMAGES).filter((s) => !pinned.has(s));
  if (missing.length > 0) throw new Error(`digests: no digest for ${missing.join(', ')}`);
  return values.toString();
}

function chartValues(collected: Parameters<typeof templated>[1]): ChartValues {
  const services = Object.values(SERVICES);
  for (const service of services) {
    if (!collected.images[service] || collected.replicas[service] === undefined) throw new Error(`the prod overlay has no Deployment running the ${service} image with replicas`);
  }
  if (!collected.images.xxlAgent) throw new Error('the prod overlay has no AgentProfile running the xxl-agent image');
  return {
    createNamespace: true,
    referenceProfile: { enabled: true },
    mutualTLS: { enabled: false },
    jetstack: { enabled: false },
    observability: { enabled: false },
    webhook: { failurePolicy: collected.failurePolicy ?? 'Fail' },
    images: Object.fromEntries(Object.values(IMAGES).map((s) => [s, collected.images[s]])) as Record<ImageKey, Image>,
    replicas: Object.fromEntries(services.map((s) => [s, collected.replicas[s]])) as Record<ServiceKey, number>,
  };
}

/** A JSON schema that refuses unknown settings and malformed ones (Helm checks values against it). */
function valuesSchema(values: ChartValues): object {
  const closed = (properties: Record<string, object>) => ({ type: 'object', additionalProperties: false, required: Object.keys(properties), properties });
  const enabled = closed({ enabled: { type: 'boolean' } });
  const image = closed({
    repository: { type: 'string', minLength: 1 },
    tag: { type: 'string', minLength: 1 },
    digest: { type: 'string', pattern: '^(sha256:[0-9a-f]{64})?$' },
  });
  return {
    $schema: 'https://json-schema.org/draft-07/schema#',
    ...closed({
      createNamespace: { type: 'boolean' },
      referenceProfile: enabled,
      mutualTLS: enabled,
      jetstack: enabled,
      observability: enabled,
      webhook: closed({ failurePolicy: { enum: ['Fail', 'Ignore'] } }),
      images: closed(Object.fromEntries(Object.keys(values.images).map((s) => [s, image]))),
      replicas: closed(Object.fromEntries(Object.keys(values.replicas).map((s) => [s, { type: 'integer', minimum: 1 }]))),
    }),
  };
}

const GENERATED = '# Generated by tools/helm/generate-chart.ts from deploy/overlays/prod and deploy/components (npm run generate:helm); do not edit.\n';

const VALUES_COMMENT = `# createNamespace: the chart creates outrigger-system (install the release in another namespace, e.g. default).
# referenceProfile: the xxl-job AgentProfile (deploy/base/profiles).
# mutualTLS: components/webhook-mutual-tls (Secret outrigger-injector-client-ca first; see deploy/README.md).
# jetstack: components/jetstack-cert-manager (Jetstack cert-manager with cainjector installed first).
# observability: components/observability (the Prometheus Operator's CRDs installed first).
# images: a digest, when set, pins the image (repository@digest) and the tag is not used; xxlAgent is the reference profile's agent.
`;

const CHART_YAML = {
  apiVersion: 'v2',
  name: 'outrigger',
  description: 'Agent sidecars for Kubernetes: an injecting admission webhook, an RBAC syncer and a webhook certificate manager.',
  type: 'application',
  version: CHART_VERSION,
  appVersion: CHART_VERSION,
  kubeVersion: `>=${MINIMUM_KUBERNETES.major}.${MINIMUM_KUBERNETES.minor}.0-0`,
};

/** What `helm install` and `helm upgrade` print: how to see it work, take part, upgrade and leave. */
const NOTES = `Outrigger {{ .Chart.AppVersion }} runs in ${INSTALL_NAMES.namespace}.

Check it (outrigger check, run in the cluster):
  helm test {{ .Release.Name }} --namespace {{ .Release.Namespace }} --logs

Let a namespace take agents, then opt pods in by their profile's annotation:
  kubectl label namespace <namespace> ${INJECTION_LABEL_KEY}=${INJECTION_LABEL_VALUE}

Before each helm upgrade, apply the chart's CRD (Helm never changes crds/):
  helm show crds <chart> --version <version> | kubectl apply --server-side -f -

helm uninstall removes the agents' bindings (its pre-delete hook) and leaves the CRD and your
AgentProfiles: npx outrigger uninstall removes them.
`;

const HELPERS = `{{/* Generated by tools/helm/generate-chart.ts; do not edit. */}}
{{/* Which optional components are on, one digit each: mutualTLS, jetstack, observability. */}}
{{- define "outrigger.variant" -}}
{{ ternary "1" "0" .Values.mutualTLS.enabled }}{{ ternary "1" "0" .Values.jetstack.enabled }}{{ ternary "1" "0" .Values.observability.enabled }}
{{- end }}
{{/* repository@digest when a digest is set, else repository:tag. */}}
{{- define "outrigger.image" -}}
{{ .repository }}{{ if .digest }}@{{ .digest }}{{ else }}:{{ .tag }}{{ end }}
{{- end }}
`;
