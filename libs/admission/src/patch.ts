import jsonpatch, { type Operation, type RemoveOperation } from 'fast-json-patch';
import { escapePointerToken, pointerTokens } from './json-pointer.js';
import { isJsonObject, type JsonObject, type JsonValue, setMember } from './json-value.js';

export type PatchOperation = Operation;

/**
 * The JSON Patch that turns `original` into `mutated`, both raw request objects (never typed
 * models, so fields we do not know survive). Keys are escaped per RFC 6901; a missing parent is
 * created with one `add` of the whole parent, and an item appended with an `add` at the old length.
 * An item removed from a list of named items (volumes, mounts) is one `remove`, first, instead of
 * the replaces of every later item that an index-by-index diff would make.
 */
export function computePatch(original: JsonObject, mutated: JsonObject): PatchOperation[] {
  const removals: RemoveOperation[] = [];
  keyedRemovals(original, mutated, '', removals);
  const operations: PatchOperation[] = [...removals];
  difference(removals.length === 0 ? original : withoutRemoved(original, removals), mutated, '', operations);
  return operations;
}

/**
 * `document` after `removals` (keyedRemovals' own, so every path exists), copying only the objects
 * and lists on the removed items' paths: the rest is shared, as the diff only reads it.
 */
function withoutRemoved(document: JsonObject, removals: readonly RemoveOperation[]): JsonObject {
  const copies = new Set<object>();
  const own = <T extends JsonObject | JsonValue[]>(value: T): T => {
    const copy = (Array.isArray(value) ? [...value] : { ...value }) as T;
    copies.add(copy);
    return copy;
  };
  const root = own(document);
  for (const { path } of removals) {
    const tokens = pointerTokens(path);
    let parent: JsonObject | JsonValue[] = root;
    for (const token of tokens.slice(0, -1)) {
      const child = (parent as Record<string, JsonValue>)[token] as JsonObject | JsonValue[];
      const mine = copies.has(child) ? child : own(child);
      if (Array.isArray(parent)) parent[Number(token)] = mine;
      else setMember(parent, token, mine);
      parent = mine;
    }
    const last = tokens[tokens.length - 1] as string;
    if (Array.isArray(parent)) parent.splice(Number(last), 1);
    else delete parent[last];
  }
  return root;
}

/**
 * Appends the operations from `before` to `after` (objects, or lists by index): removes and
 * replaces from the last key back, so earlier indexes stay right, then adds in `after`'s order.
 * Values are `after`'s own, not copies: the patch is serialised before `after` changes again.
 */
function difference(before: JsonObject | JsonValue[], after: JsonObject | JsonValue[], path: string, out: PatchOperation[]): void {
  const at = (key: string) => `${path}/${escapePointerToken(key)}`;
  const old = before as Record<string, JsonValue>;
  const now = after as Record<string, JsonValue>;
  const oldKeys = Object.keys(before);
  for (let i = oldKeys.length - 1; i >= 0; i--) {
    const key = oldKeys[i] as string;
    if (!Object.hasOwn(after, key)) {
      out.push({ op: 'remove', path: at(key) });
      continue;
    }
    const [was, is] = [old[key], now[key]] as [JsonValue, JsonValue];
    if (isContainer(was) && isContainer(is) && Array.isArray(was) === Array.isArray(is)) difference(was, is, at(key), out);
    else if (was !== is) out.push({ op: 'replace', path: at(key), value: is });
  }
  for (const key of Object.keys(after)) if (!Object.hasOwn(before, key)) out.push({ op: 'add', path: at(key), value: now[key] });
}

function isContainer(value: JsonValue): value is JsonObject | JsonValue[] {
  return typeof value === 'object' && value !== null;
}

/**
 * Removes of the items of keyed lists that `after` no longer has: the lists inside an item before
 * the list that holds it, and each list from its end, so every path keeps its original indexes.
 */
function keyedRemovals(before: JsonValue | undefined, after: JsonValue | undefined, path: string, out: RemoveOperation[]): void {
  if (Array.isArray(before) && Array.isArray(after)) {
    const keyed = itemKeys(before, after);
    if (!keyed) {
      if (before.length === after.length) before.forEach((item, i) => isContainer(item) && keyedRemovals(item, after[i], `${path}/${i}`, out));
      return;
    }
    const [names, kept] = keyed;
    const index = new Map(kept.map((name, i) => [name, i]));
    names.forEach((name, i) => keyedRemovals(before[i], after[index.get(name) ?? -1], `${path}/${i}`, out));
    for (let i = names.length - 1; i >= 0; i--) if (!index.has(names[i] ?? '')) out.push({ op: 'remove', path: `${path}/${i}` });
  } else if (isJsonObject(before) && isJsonObject(after)) {
    for (const key of Object.keys(before)) {
      const was = before[key] as JsonValue;
      // Only lists can lose keyed items: leaves are passed over without building their path.
      if (isContainer(was) && Object.hasOwn(after, key)) keyedRemovals(was, after[key], `${path}/${escapePointerToken(key)}`, out);
    }
  }
}

/** What identifies an item of a Kubernetes list: its name, or for volume mounts (a volume may be mounted twice) its path. */
const KEYS = ['name', 'mountPath'] as const;

/** The keys of both lists' items, by the first of KEYS that identifies the items of both. */
function itemKeys(before: readonly JsonValue[], after: readonly JsonValue[]): [string[], string[]] | undefined {
  for (const key of KEYS) {
    const names = uniqueKeys(before, key);
    const kept = names && uniqueKeys(after, key);
    if (names && kept) return [names, kept];
  }
  return undefined;
}

/** The `key` of every item when each is an object with a value of its own, else undefined. */
function uniqueKeys(list: readonly JsonValue[], key: string): string[] | undefined {
  const values = list.map((item) => (isJsonObject(item) && typeof item[key] === 'string' ? item[key] : undefined));
  if (values.some((value) => value === undefined) || new Set(values).size !== values.length) return undefined;
  return values as string[];
}

/** The `patch` field of an AdmissionResponse: base64 of the JSON array of operations. */
export function encodePatch(operations: readonly PatchOperation[]): string {
  return Buffer.from(JSON.stringify(operations), 'utf8').toString('base64');
}

export function decodePatch(encoded: string): PatchOperation[] {
  return JSON.parse(Buffer.from(encoded, 'base64').toString('utf8')) as PatchOperation[];
}

/** Applies a patch to a copy of `document` (tests, the offline CLI); throws on an invalid op. */
export function applyPatchCopy<T extends JsonObject>(document: T, operations: readonly PatchOperation[]): T {
  // The copy is ours to change: fast-json-patch would otherwise copy it once more.
  return jsonpatch.applyPatch(structuredClone(document), [...operations], true, true).newDocument;
}
