import { isDeepStrictEqual } from 'node:util';
import YAML from 'yaml';
import type { AdmissionContext } from '@outrigger/admission';
import { err, isJsonObject, type JsonObject, mutatePod, objectMember, ok, pointerTokens, type Result, stringMember } from '@outrigger/admission';
import { carriesPodTemplate, isList, podTemplatePath, valueAtPath } from './manifest-workloads.js';
import { statusAddedParts, statusAnnotation, statusTurnedAutomountOff } from './injection-status.js';
import { AGENT_TOKEN_VOLUME } from './service-account-token.js';
import { sidecarExtension, type SidecarExtensionOptions } from './sidecar-extension.js';

export interface InjectManifestsOptions extends SidecarExtensionOptions {
  /** For documents without metadata.namespace, as kubectl would use its current namespace. */
  readonly defaultNamespace?: string;
}

export interface DocumentOutcome {
  readonly index: number;
  /** The position in a List's items, for objects inside a List. */
  readonly item?: number;
  readonly kind: string | undefined;
  readonly name: string | undefined;
  /** The audit decision (`injected`, `skipped:<reason>`), `removed` (uninject), or `passed-through` for objects without a pod template. */
  readonly decision: string;
}

export interface ManifestInjection {
  readonly yaml: string;
  readonly warnings: readonly string[];
  readonly documents: readonly DocumentOutcome[];
}

/** Where one object sits in its YAML document: the document itself, or an item of a List. */
interface Target {
  readonly prefix: readonly (string | number)[];
  readonly object: JsonObject;
  readonly outcome: Omit<DocumentOutcome, 'decision'>;
}

/** One object's edit: the outcome, its warnings, and the nodes to set or delete (paths from the document root). */
interface ObjectEdit {
  readonly decision: string;
  readonly warnings: readonly string[];
  readonly set: readonly { readonly path: readonly (string | number)[]; readonly value: unknown }[];
  readonly remove: readonly (readonly (string | number)[])[];
  /** The object as it must read after the edit (checked against the edited YAML). */
  readonly expected?: JsonObject;
}

/** The skip reason of an object with a pod template of a kind offline injection does not edit. */
export const UNSUPPORTED_KIND = 'unsupported-kind';

type EditObject = (target: Target, where: string) => Result<ObjectEdit>;

/**
 * Offline injection, like `istioctl kube-inject`: runs the webhook's own sidecar extension on the
 * pod template of each Pod, ReplicationController, Deployment, StatefulSet, DaemonSet, ReplicaSet,
 * Job and CronJob in a multi-document YAML text, also inside a `List` (`kubectl get -o yaml`).
 * Documents that are not changed keep their exact text; changed ones are edited in place
 * (comments survive). A denial is an error naming the document.
 */
export function injectManifests(yamlText: string, options: InjectManifestsOptions): Result<ManifestInjection> {
  const extension = sidecarExtension(options);
  const defaultNamespace = options.defaultNamespace ?? 'default';
  return editManifests(yamlText, (target, where) => {
    const templatePath = podTemplatePath(target.object);
    if (templatePath === undefined) return ok({ decision: carriesPodTemplate(target.object) ? `skipped:${UNSUPPORTED_KIND}` : 'passed-through', warnings: [], set: [], remove: [] });
    const template = valueAtPath(target.object, templatePath);
    if (!isJsonObject(template)) return err(`${where}: ${templatePath.join('.')} is missing`);
    const pod: JsonObject = templatePath.length === 0 ? template : { apiVersion: 'v1', kind: 'Pod', ...template };
    const mutation = mutatePod(pod, manifestContext(target.outcome.index, objectMember(target.object, 'metadata'), defaultNamespace), [extension]);
    if (mutation.outcome === 'denied') return err(`${where}: ${mutation.message}`);
    if (mutation.failure) return err(`${where}: internal error: ${describeError(mutation.failure.error)}`);
    const set = [];
    const remove = [];
    for (const op of mutation.patch) {
      // The extension's ownership guard already limited ops to owned adds, replaces and removes (all first).
      const path = [...target.prefix, ...templatePath, ...pointerTokens(op.path).map((step) => (/^(0|[1-9][0-9]*)$/.test(step) ? Number(step) : step))];
      if (op.op === 'remove') remove.push(path);
      else if (op.op === 'add' || op.op === 'replace') set.push({ path, value: op.value });
      else return err(`${where}: unexpected ${op.op} operation`);
    }
    const warnings = [...mutation.warnings];
    const expected = templatePath.length === 0 ? mutation.pod : withoutTypeMeta(mutation.pod);
    return ok({ decision: mutation.decision, warnings, set, remove, expected: setAt(target.object, templatePath, expected) });
  });
}

/**
 * The reverse of injectManifests: removes from every pod template the agent containers, status
 * annotations and agent token volume the injector wrote (recognised by the status annotation of a
 * profile in `profiles`), and `automountServiceAccountToken`, the volumes and the image pull
 * secrets where that status says the injector added them. `uninjectManifests(injectManifests(x)) === x` for what injectManifests produced.
 */
export function uninjectManifests(yamlText: string, options: Pick<InjectManifestsOptions, 'profiles'>): Result<ManifestInjection> {
  return editManifests(yamlText, (target) => {
    const templatePath = podTemplatePath(target.object);
    const template = templatePath === undefined ? undefined : valueAtPath(target.object, templatePath);
    if (templatePath === undefined || !isJsonObject(template)) return ok({ decision: 'passed-through', warnings: [], set: [], remove: [] });
    const annotations = objectMember(objectMember(template, 'metadata') ?? {}, 'annotations') ?? {};
    const remove: (string | number)[][] = [];
    const at = (...path: (string | number)[]) => [...target.prefix, ...templatePath, ...path];
    const spec = objectMember(template, 'spec') ?? {};
    const injected = options.profiles.filter((profile) => statusAnnotation(profile) in annotations);
    const added = injected.map((profile) => statusAddedParts(String(annotations[statusAnnotation(profile)])));
    const volumes = new Set(added.flatMap((parts) => parts.volumes));
    if (injected.length > 0) volumes.add(AGENT_TOKEN_VOLUME);
    remove.push(...removeNamed(spec, 'volumes', volumes, (...path) => at('spec', ...path)));
    remove.push(...removeNamed(spec, 'imagePullSecrets', new Set(added.flatMap((parts) => parts.imagePullSecrets)), (...path) => at('spec', ...path)));
    const turnedOff = injected.some((profile) => statusTurnedAutomountOff(String(annotations[statusAnnotation(profile)])));
    if (turnedOff && spec['automountServiceAccountToken'] === false) remove.push(at('spec', 'automountServiceAccountToken'));
    for (const profile of injected) {
      const key = statusAnnotation(profile);
      remove.push(at('metadata', 'annotations', key));
      for (const list of ['initContainers', 'containers'] as const) {
        const containers = (objectMember(template, 'spec') ?? {})[list];
        if (!Array.isArray(containers)) continue;
        const index = containers.findIndex((c) => isJsonObject(c) && c['name'] === profile.container.name);
        if (index < 0) continue;
        // The list was created for the agent alone: remove the list, as it was before.
        remove.push(containers.length === 1 && list === 'initContainers' ? at('spec', list) : at('spec', list, index));
      }
    }
    return ok({ decision: remove.length > 0 ? 'removed' : 'skipped:not-injected', warnings: [], set: [], remove });
  });
}

/** Removal paths for the entries of `spec[list]` named in `names`; the whole list when it holds only those (it was created for them). */
function removeNamed(spec: JsonObject, list: 'volumes' | 'imagePullSecrets', names: ReadonlySet<string>, at: (...path: (string | number)[]) => (string | number)[]): (string | number)[][] {
  const entries = spec[list];
  if (!Array.isArray(entries)) return [];
  const indices = entries.flatMap((entry, index) => (isJsonObject(entry) && typeof entry['name'] === 'string' && names.has(entry['name']) ? [index] : []));
  if (indices.length === 0) return [];
  return indices.length === entries.length ? [at(list)] : indices.map((index) => at(list, index));
}

function editManifests(yamlText: string, edit: EditObject): Result<ManifestInjection> {
  const documents = YAML.parseAllDocuments(yamlText, { uniqueKeys: true });
  // Only comments or blank lines: nothing to do, keep the text as it is.
  if (documents.length === 0) return ok({ yaml: yamlText, warnings: [], documents: [] });
  const outcomes: DocumentOutcome[] = [];
  const warnings: string[] = [];
  const segments: string[] = [];
  for (const [index, document] of documents.entries()) {
    const start = index === 0 ? 0 : document.range[0];
    const end = documents[index + 1]?.range[0] ?? yamlText.length;
    if (document.errors.length > 0) {
      return err(`document ${index}: is not valid YAML (${document.errors[0]?.message.split('\n')[0] ?? 'parse error'})`);
    }
    let changed = false;
    try {
      const content: unknown = document.contents === null ? null : document.toJS({ maxAliasCount: 100 });
      for (const target of targets(content, index)) {
        const where = describeDocument(target.outcome);
        const result = edit(target, where);
        if (!result.ok) return result;
        const { decision, set, remove, expected } = result.value;
        outcomes.push({ ...target.outcome, decision });
        warnings.push(...result.value.warnings.map((warning) => `${where}: ${warning}`));
        if (set.length === 0 && remove.length === 0) continue;
        const applied = applyEdits(document, set, remove);
        if (!applied.ok) return err(`${where}: ${applied.error}`);
        const written = target.prefix.reduce<unknown>((node, key) => (node as Record<string | number, unknown> | undefined)?.[key], document.toJS({ maxAliasCount: 100 }));
        if (expected && !isDeepStrictEqual(written, expected)) return err(`${where}: internal error: the edited YAML does not match the injected pod`);
        changed = true;
      }
    } catch (error) {
      // toJS refuses alias bombs and similar; report them instead of throwing at the CLI.
      return err(`document ${index}: cannot be read (${describeError(error)})`);
    }
    // No reflow; sequences indented and flow collections spaced as this document writes them.
    const text = yamlText.slice(start, end);
    segments.push(changed ? document.toString({ lineWidth: 0, indentSeq: !compactSequences(text), flowCollectionPadding: flowCollectionPadding(text) }) : text);
  }
  return ok({ yaml: segments.join(''), warnings, documents: outcomes });
}

/** The objects of a document: itself, or each item of a List. */
function targets(content: unknown, index: number): Target[] {
  if (!isJsonObject(content)) return [{ prefix: [], object: {}, outcome: { index, kind: undefined, name: undefined } }];
  const items = isList(content) ? (content['items'] as unknown[]) : undefined;
  const objects = items ? items.map((item, i) => ({ prefix: ['items', i], object: isJsonObject(item) ? item : {}, item: i })) : [{ prefix: [], object: content, item: undefined }];
  return objects.map(({ prefix, object, item }) => {
    const metadata = objectMember(object, 'metadata');
    const name = metadata && (stringMember(metadata, 'name') ?? stringMember(metadata, 'generateName'));
    return { prefix, object, outcome: { index, ...(item === undefined ? {} : { item }), kind: stringMember(object, 'kind'), name } };
  });
}

function applyEdits(document: YAML.Document.Parsed, set: ObjectEdit['set'], remove: ObjectEdit['remove']): Result<void> {
  try {
    // Removes first, as a patch has them, each from the end so earlier indexes of the same list stay valid.
    for (const path of [...remove].sort((a, b) => comparePaths(b, a))) document.deleteIn(path);
    for (const { path, value } of set) document.setIn(path, document.createNode(value));
    return ok(undefined);
  } catch (error) {
    // e.g. annotations given as a YAML alias: editing it in place would change its anchor too.
    return err(`cannot edit this YAML in place (${describeError(error)})`);
  }
}

function comparePaths(a: readonly (string | number)[], b: readonly (string | number)[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const x = a[i];
    const y = b[i];
    if (x === y) continue;
    if (typeof x === 'number' && typeof y === 'number') return x - y;
    return String(x) < String(y) ? -1 : 1;
  }
  return a.length - b.length;
}

/** `object` with `value` at `path` (a copy along the path). */
function setAt(object: JsonObject, path: readonly string[], value: JsonObject): JsonObject {
  if (path.length === 0) return value;
  const [head, ...rest] = path as [string, ...string[]];
  const child = object[head];
  return { ...object, [head]: setAt(isJsonObject(child) ? child : {}, rest, value) };
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

/** Whether sequences sit at their key's indentation, as `kubectl get -o yaml` writes them (`items:\n- a`). */
function compactSequences(text: string): boolean {
  return /^( *)[^\s#-][^\n]*:\n\1- /m.test(text);
}

/** Whether most flow collections in `text` are written padded, `{ a: b }`, rather than `{a: b}`. */
function flowCollectionPadding(text: string): boolean {
  const padded = text.match(/[[{] +[^\s\]}]/g)?.length ?? 0;
  const tight = text.match(/[[{][^\s\]}]/g)?.length ?? 0;
  return padded >= tight;
}

/** `document 2 item 0 (Deployment web)`: how errors, warnings and the CLI name an object. */
export function describeDocument(outcome: Omit<DocumentOutcome, 'decision'>): string {
  const what = [outcome.kind, outcome.name].filter((part) => part !== undefined).join(' ');
  return `document ${outcome.index}${outcome.item === undefined ? '' : ` item ${outcome.item}`}${what ? ` (${what})` : ''}`;
}

function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
