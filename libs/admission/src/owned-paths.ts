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
}

export const NO_OWNED_PATHS: OwnedPaths = { members: [], appendable: [], creatable: [] };

export function mergeOwnedPaths(paths: readonly OwnedPaths[]): OwnedPaths {
  return {
    members: [...new Set(paths.flatMap((p) => p.members))],
    appendable: [...new Set(paths.flatMap((p) => p.appendable))],
    creatable: [...new Set(paths.flatMap((p) => p.creatable))],
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
  const appended = new Map<string, number>();
  const violations: string[] = [];
  for (const op of operations) {
    const problem = checkOperation(op, owned, original, appended);
    if (problem) violations.push(`${op.op} ${op.path}: ${problem}`);
  }
  return violations;
}

function checkOperation(
  op: PatchOperation,
  owned: OwnedPaths,
  original: JsonValue,
  appended: Map<string, number>,
): string | undefined {
  if (op.op === 'replace') {
    return owned.members.includes(op.path) ? undefined : 'replace of a path the injector does not own';
  }
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
    const expected = list.length + (appended.get(parent) ?? 0);
    if (last !== String(expected)) return `not an append (expected index ${expected})`;
    appended.set(parent, (appended.get(parent) ?? 0) + 1);
    return undefined;
  }
  return 'add to a path the injector does not own';
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
