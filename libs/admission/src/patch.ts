import jsonpatch, { type Operation } from 'fast-json-patch';
import type { JsonObject } from './json-value.js';

export type PatchOperation = Operation;

/**
 * The JSON Patch that turns `original` into `mutated`, both raw request objects (never typed
 * models, so fields we do not know survive). fast-json-patch escapes keys per RFC 6901, creates a
 * missing parent with one `add` of the whole parent and appends with an `add` at the old length.
 */
export function computePatch(original: JsonObject, mutated: JsonObject): PatchOperation[] {
  return jsonpatch.compare(original, mutated);
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
  return jsonpatch.applyPatch(structuredClone(document), [...operations], true, false).newDocument;
}
