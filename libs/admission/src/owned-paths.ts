import { isJsonObject, type JsonValue } from './json-value.js';
import { escapePointerToken, splitPointer, valueAtPointer } from './json-pointer.js';
import type { PatchOperation } from './patch.js';

/**
 * What an extension may change, as escaped JSON pointers. Anything else in a patch is a bug: the
 * injector must never remove or replace a field it does not own.
 */
export interface OwnedPaths {
  /** Object members that may be added, or replaced when present (e.g. our status annotation). */
  readonly members: readonly string[];
  /** Arrays that may grow by `add` at their current end (never an insert, which shifts others). */
  readonly appendable: readonly string[];
  /** Parents that may be created by one `add` when missing; their content must be owned too. */
  readonly creatable: readonly string[];
  /** Named list items that may be removed (e.g. the token volume another admission plugin added). */
  readonly removable?: readonly RemovableItems[];
}

/** Items of the lists at `list` (`*` stands for any one list index) whose `name` starts with `namePrefix`. */
export interface RemovableItems {
  readonly list: string;
  readonly namePrefix: string;
}

export const NO_OWNED_PATHS: OwnedPaths = { members: [], appendable: [], creatable: [] };

export function mergeOwnedPaths(paths: readonly OwnedPaths[]): OwnedPaths {
  // One mutator, the usual case: its own paths, as they are (duplicates change no check).
  if (paths.length === 1) return paths[0] as OwnedPaths;
  const removable = new Map(paths.flatMap((p) => p.removable ?? []).map((r) => [`${r.list} ${r.namePrefix}`, r]));
  return {
    members: [...new Set(paths.flatMap((p) => p.members))],
    appendable: [...new Set(paths.flatMap((p) => p.appendable))],
    creatable: [...new Set(paths.flatMap((p) => p.creatable))],
    ...(removable.size > 0 ? { removable: [...removable.values()] } : {}),
  };
}

export class UnownedPatchError extends Error {
  constructor(readonly violations: readonly string[]) {
    super(`patch touches paths the injector does not own: ${violations.join('; ')}`);
    this.name = 'UnownedPatchError';
  }
}

/** Throws UnownedPatchError when any op is not an owned add/replace against `original`. */
export function assertOwnedOps(operations: readonly PatchOperation[], owned: OwnedPaths, original: JsonValue): void {
  const violations = findUnownedOps(operations, owned, original);
  if (violations.length > 0) throw new UnownedPatchError(violations);
}

/** One message per op that is not allowed; empty when the whole patch is owned. */
export function findUnownedOps(operations: readonly PatchOperation[], owned: OwnedPaths, original: JsonValue): string[] {
  const lists: ListEdits = { appended: new Map(), removed: new Map() };
  const violations: string[] = [];
  for (const op of operations) {
    const problem = checkOperation(op, owned, original, lists);
    if (problem) violations.push(`${op.op} ${op.path}: ${problem}`);
  }
  return violations;
}

/** What the patch did so far to each list: items appended, and the original indexes removed (descending). */
interface ListEdits {
  readonly appended: Map<string, number>;
  readonly removed: Map<string, number[]>;
}

function checkOperation(op: PatchOperation, owned: OwnedPaths, original: JsonValue, lists: ListEdits): string | undefined {
  if (op.op === 'replace') {
    return owned.members.includes(op.path) ? undefined : 'replace of a path the injector does not own';
  }
  if (op.op === 'remove') return checkRemoval(op.path, owned, original, lists);
  if (op.op !== 'add') return `${op.op} is never allowed`;
  if (owned.members.includes(op.path)) return undefined;

  const present = valueAtPointer(original, op.path) !== undefined;
  if (owned.creatable.includes(op.path)) {
    if (present) return 'would overwrite an existing value';
    return checkCreatedValue(op.path, op.value as JsonValue, owned);
  }

  const [parent, last] = splitPointer(op.path);
  if (owned.appendable.includes(parent)) {
    const list = valueAtPointer(original, parent);
    if (!Array.isArray(list)) return 'append to a list that does not exist';
    const expected = list.length - (lists.removed.get(parent)?.length ?? 0) + (lists.appended.get(parent) ?? 0);
    if (last !== String(expected)) return `not an append (expected index ${expected})`;
    lists.appended.set(parent, (lists.appended.get(parent) ?? 0) + 1);
    return undefined;
  }
  return 'add to a path the injector does not own';
}

/**
 * A remove of an item the extension may remove, from the end of its list down (so each index is
 * still the original one) and before anything is appended to it. The lists that hold such lists
 * (containers) only ever grow at their end, so their indexes are the original ones too.
 */
function checkRemoval(path: string, owned: OwnedPaths, original: JsonValue, lists: ListEdits): string | undefined {
  const [parent, last] = splitPointer(path);
  const rule = (owned.removable ?? []).find((r) => matchesListPattern(parent, r.list));
  if (!rule) return 'remove of a path the injector does not own';
  const item = /^(0|[1-9][0-9]*)$/.test(last) ? valueAtPointer(original, path) : undefined;
  const name = isJsonObject(item) ? item['name'] : undefined;
  if (typeof name !== 'string' || !name.startsWith(rule.namePrefix)) return `removes an item not named ${rule.namePrefix}*`;
  const removed = lists.removed.get(parent) ?? [];
  const previous = removed[removed.length - 1];
  if ((previous !== undefined && Number(last) >= previous) || lists.appended.has(parent)) return 'removes must go from the end of the list down, before any append';
  lists.removed.set(parent, [...removed, Number(last)]);
  return undefined;
}

/** Whether a list's pointer matches a pattern whose `*` tokens stand for any one list index. */
function matchesListPattern(pointer: string, pattern: string): boolean {
  const tokens = pointer.split('/');
  const wanted = pattern.split('/');
  return tokens.length === wanted.length && wanted.every((token, i) => token === tokens[i] || (token === '*' && /^(0|[1-9][0-9]*)$/.test(tokens[i] ?? '')));
}

/** A created parent may only hold owned members, owned lists or further creatable parents. */
function checkCreatedValue(path: string, value: JsonValue, owned: OwnedPaths): string | undefined {
  if (Array.isArray(value)) return owned.appendable.includes(path) ? undefined : 'creates a list the injector does not own';
  if (!isJsonObject(value)) return 'creates a scalar where a parent was expected';
  for (const [key, child] of Object.entries(value)) {
    const childPath = `${path}/${escapePointerToken(key)}`;
    if (owned.members.includes(childPath)) continue;
    if (owned.creatable.includes(childPath)) {
      const problem = checkCreatedValue(childPath, child, owned);
      if (problem) return `${childPath}: ${problem}`;
      continue;
    }
    return `creates ${childPath}, which the injector does not own`;
  }
  return undefined;
}
