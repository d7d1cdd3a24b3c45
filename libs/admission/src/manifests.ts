import { isDeepStrictEqual } from 'node:util';
import YAML from 'yaml';
import type { AdmissionContext } from './extension.js';
import { isJsonObject, objectMember, stringMember, type JsonObject } from './json.js';
import { pointerTokens } from './json-pointer.js';
import { podTemplatePath, valueAtPath } from './manifest-workloads.js';
import { mutatePod } from './mutate.js';
import { err, ok, type Result } from './result.js';
import { sidecarExtension, type SidecarExtensionOptions } from './sidecar/sidecar-extension.js';

export interface InjectManifestsOptions extends SidecarExtensionOptions {
  /** For documents without metadata.namespace, as kubectl would use its current namespace. */
  readonly defaultNamespace?: string;
}

export interface DocumentOutcome {
  readonly index: number;
  readonly kind: string | undefined;
  readonly name: string | undefined;
  /** The audit decision (`injected`, `skipped:<reason>`), or `passed-through` for other objects. */
  readonly decision: string;
}

export interface ManifestInjection {
  readonly yaml: string;
  readonly warnings: readonly string[];
  readonly documents: readonly DocumentOutcome[];
}

/**
 * Offline injection, like `istioctl kube-inject`: runs the webhook's own sidecar extension on the
 * pod template of each Pod, Deployment, StatefulSet, DaemonSet, ReplicaSet, Job and CronJob in a
 * multi-document YAML text. Documents that are not changed keep their exact text; changed ones
 * are edited in place (comments survive). A denial is an error naming the document.
 */
export function injectManifests(yamlText: string, options: InjectManifestsOptions): Result<ManifestInjection> {
  const extension = sidecarExtension(options);
  const documents = YAML.parseAllDocuments(yamlText, { uniqueKeys: true });
  // Only comments or blank lines: nothing to inject, keep the text as it is.
  if (documents.length === 0) return ok({ yaml: yamlText, warnings: [], documents: [] });

  const outcomes: DocumentOutcome[] = [];
  const warnings: string[] = [];
  const segments: string[] = [];
  for (const [index, document] of documents.entries()) {
    const start = index === 0 ? 0 : document.range[0];
    const end = documents[index + 1]?.range[0] ?? yamlText.length;
    const original = yamlText.slice(start, end);
    if (document.errors.length > 0) {
      return err(`document ${index}: is not valid YAML (${document.errors[0]?.message.split('\n')[0] ?? 'parse error'})`);
    }
    let outcome: Result<DocumentInjection>;
    try {
      outcome = injectDocument(document, index, extension, options.defaultNamespace ?? 'default');
    } catch (error) {
      // toJS refuses alias bombs and similar; report them instead of throwing at the CLI.
      return err(`document ${index}: cannot be read (${describeError(error)})`);
    }
    if (!outcome.ok) return outcome;
    outcomes.push(outcome.value.outcome);
    warnings.push(...outcome.value.warnings.map((warning) => `${label(outcome.value.outcome)}: ${warning}`));
    segments.push(outcome.value.changed ? document.toString({ lineWidth: 0 }) : original);
  }
  return ok({ yaml: segments.join(''), warnings, documents: outcomes });
}

interface DocumentInjection {
  readonly outcome: DocumentOutcome;
  readonly warnings: readonly string[];
  readonly changed: boolean;
}

function injectDocument(
  document: YAML.Document.Parsed,
  index: number,
  extension: ReturnType<typeof sidecarExtension>,
  defaultNamespace: string,
): Result<DocumentInjection> {
  const content: unknown = document.contents === null ? null : document.toJS({ maxAliasCount: 100 });
  const passThrough = (kind?: string, name?: string) =>
    ok<DocumentInjection>({ outcome: { index, kind, name, decision: 'passed-through' }, warnings: [], changed: false });
  if (!isJsonObject(content)) return passThrough();

  const metadata = objectMember(content, 'metadata');
  const kind = stringMember(content, 'kind');
  const name = metadata && (stringMember(metadata, 'name') ?? stringMember(metadata, 'generateName'));
  const where = label({ index, kind, name, decision: '' });
  const templatePath = podTemplatePath(content);
  if (templatePath === undefined) return passThrough(kind, name);

  const template = valueAtPath(content, templatePath);
  if (!isJsonObject(template)) return err(`${where}: ${templatePath.join('.')} is missing`);
  const pod: JsonObject = templatePath.length === 0 ? template : { apiVersion: 'v1', kind: 'Pod', ...template };
  const mutation = mutatePod(pod, manifestContext(index, metadata, defaultNamespace), [extension]);
  if (mutation.outcome === 'denied') return err(`${where}: ${mutation.message}`);
  if (mutation.failure) return err(`${where}: internal error: ${describeError(mutation.failure.error)}`);

  try {
    for (const op of mutation.patch) {
      // The extension's ownership guard already limited ops to owned adds and replaces.
      if (op.op !== 'add' && op.op !== 'replace') return err(`${where}: unexpected ${op.op} operation`);
      document.setIn([...templatePath, ...pointerTokens(op.path)], document.createNode(op.value));
    }
  } catch (error) {
    // e.g. annotations given as a YAML alias: editing it in place would change its anchor too.
    return err(`${where}: cannot edit this YAML in place (${describeError(error)})`);
  }
  const written = valueAtPath(document.toJS({ maxAliasCount: 100 }) as JsonObject, templatePath);
  const expected = templatePath.length === 0 ? mutation.pod : withoutTypeMeta(mutation.pod);
  if (!isDeepStrictEqual(written, expected)) return err(`${where}: internal error: the edited YAML does not match the injected pod`);
  return ok({
    outcome: { index, kind, name, decision: mutation.decision },
    warnings: mutation.warnings,
    changed: mutation.patch.length > 0,
  });
}

function manifestContext(index: number, metadata: JsonObject | undefined, defaultNamespace: string): AdmissionContext {
  return {
    uid: `manifest-document-${index}`,
    namespace: (metadata && stringMember(metadata, 'namespace')) || defaultNamespace,
    name: '',
    operation: 'CREATE',
    dryRun: false,
    userInfo: {},
    kind: { group: '', version: 'v1', kind: 'Pod' },
    resource: { group: '', version: 'v1', resource: 'pods' },
    subResource: '',
  };
}

function withoutTypeMeta(pod: JsonObject): JsonObject {
  const { apiVersion: _apiVersion, kind: _kind, ...template } = pod;
  return template;
}

function label(outcome: DocumentOutcome): string {
  const what = [outcome.kind, outcome.name].filter((part) => part !== undefined).join(' ');
  return `document ${outcome.index}${what ? ` (${what})` : ''}`;
}

function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
