import {
  ADMISSION_API_VERSIONS,
  ADMISSION_OPERATIONS,
  type AdmissionApiVersion,
  type AdmissionOperation,
  type AdmissionRequest,
  type AdmissionReview,
  type GroupVersionKind,
  type GroupVersionResource,
  type UserInfo,
} from './admission-types.js';
import { isJsonObject, type JsonObject } from './json-value.js';
import { err, ok, type Result } from './result.js';

/** Thrown only inside this module to carry the first problem found; never escapes. */
class ReviewShapeError extends Error {}

/**
 * Validates a decoded AdmissionReview body (v1 or v1beta1). Never throws: any input, including
 * null, arrays, exotic objects or throwing getters, yields either the review or a message that
 * names the offending field, e.g. `request.uid: must be a non-empty string`.
 */
export function parseAdmissionReview(body: unknown): Result<AdmissionReview> {
  try {
    return ok(readReview(body));
  } catch (error) {
    if (error instanceof ReviewShapeError) return err(error.message);
    return err('body: could not be read as an AdmissionReview');
  }
}

function fail(path: string, problem: string): never {
  throw new ReviewShapeError(`${path}: ${problem}`);
}

function readReview(body: unknown): AdmissionReview {
  const root = requireObject(body, 'body');
  const apiVersion = root['apiVersion'];
  if (!ADMISSION_API_VERSIONS.includes(apiVersion as AdmissionApiVersion)) {
    fail('apiVersion', `must be one of ${ADMISSION_API_VERSIONS.join(', ')} (got ${describe(apiVersion)})`);
  }
  if (root['kind'] !== 'AdmissionReview') fail('kind', `must be AdmissionReview (got ${describe(root['kind'])})`);
  return {
    apiVersion: apiVersion as AdmissionApiVersion,
    kind: 'AdmissionReview',
    request: readRequest(requireObject(root['request'], 'request')),
  };
}

function readRequest(request: JsonObject): AdmissionRequest {
  const uid = request['uid'];
  if (typeof uid !== 'string' || uid.length === 0) fail('request.uid', 'must be a non-empty string');
  const operation = request['operation'];
  if (!ADMISSION_OPERATIONS.includes(operation as AdmissionOperation)) {
    fail('request.operation', `must be one of ${ADMISSION_OPERATIONS.join(', ')} (got ${describe(operation)})`);
  }
  const object = request['object'];
  if (object !== undefined && object !== null && !isJsonObject(object)) fail('request.object', 'must be an object');
  const oldObject = request['oldObject'];
  if (oldObject !== undefined && oldObject !== null && !isJsonObject(oldObject)) {
    fail('request.oldObject', 'must be an object or null');
  }
  const options = request['options'];
  if (options !== undefined && options !== null && !isJsonObject(options)) {
    fail('request.options', 'must be an object or null');
  }
  const dryRun = request['dryRun'];
  if (dryRun !== undefined && dryRun !== null && typeof dryRun !== 'boolean') fail('request.dryRun', 'must be a boolean');

  return {
    uid,
    kind: readKind(request['kind'], 'request.kind'),
    resource: readResource(request['resource'], 'request.resource'),
    ...optionalString(request, 'subResource'),
    ...(request['requestKind'] == null ? {} : { requestKind: readKind(request['requestKind'], 'request.requestKind') }),
    ...(request['requestResource'] == null
      ? {}
      : { requestResource: readResource(request['requestResource'], 'request.requestResource') }),
    ...optionalString(request, 'requestSubResource'),
    ...optionalString(request, 'name'),
    ...optionalString(request, 'namespace'),
    operation: operation as AdmissionOperation,
    userInfo: readUserInfo(request['userInfo']),
    ...(isJsonObject(object) ? { object } : {}),
    ...(oldObject === undefined ? {} : { oldObject: isJsonObject(oldObject) ? oldObject : null }),
    ...(typeof dryRun === 'boolean' ? { dryRun } : {}),
    ...(options === undefined ? {} : { options: isJsonObject(options) ? options : null }),
  };
}

function readKind(value: unknown, path: string): GroupVersionKind {
  const gvk = requireObject(value, path);
  return {
    group: requireString(gvk['group'] ?? '', `${path}.group`),
    version: requireNonEmpty(gvk['version'], `${path}.version`),
    kind: requireNonEmpty(gvk['kind'], `${path}.kind`),
  };
}

function readResource(value: unknown, path: string): GroupVersionResource {
  const gvr = requireObject(value, path);
  return {
    group: requireString(gvr['group'] ?? '', `${path}.group`),
    version: requireNonEmpty(gvr['version'], `${path}.version`),
    resource: requireNonEmpty(gvr['resource'], `${path}.resource`),
  };
}

/** kube-apiserver always sends userInfo; tolerate its absence, but not a wrong shape. */
function readUserInfo(value: unknown): UserInfo {
  if (value === undefined || value === null) return {};
  const info = requireObject(value, 'request.userInfo');
  const groups = info['groups'];
  if (groups !== undefined && groups !== null) {
    if (!Array.isArray(groups) || !groups.every((group) => typeof group === 'string')) {
      fail('request.userInfo.groups', 'must be a list of strings');
    }
  }
  const extra = info['extra'];
  if (extra !== undefined && extra !== null) {
    const extraObject = requireObject(extra, 'request.userInfo.extra');
    for (const [key, values] of Object.entries(extraObject)) {
      if (!Array.isArray(values) || !values.every((item) => typeof item === 'string')) {
        fail(`request.userInfo.extra[${JSON.stringify(key)}]`, 'must be a list of strings');
      }
    }
  }
  // Object.assign, not a literal that starts with a spread: see no-restricted-syntax in eslint.config.mjs.
  return Object.assign(
    {},
    optionalString(info, 'username', 'request.userInfo'),
    optionalString(info, 'uid', 'request.userInfo'),
    Array.isArray(groups) ? { groups: groups as string[] } : {},
    isJsonObject(extra) ? { extra: extra as Record<string, string[]> } : {},
  );
}

function optionalString(parent: JsonObject, key: string, at = 'request'): Record<string, string> {
  const value = parent[key];
  if (value === undefined || value === null) return {};
  return { [key]: requireString(value, `${at}.${key}`) };
}

function requireObject(value: unknown, path: string): JsonObject {
  if (!isJsonObject(value)) fail(path, `must be an object (got ${describe(value)})`);
  return value;
}

function requireString(value: unknown, path: string): string {
  if (typeof value !== 'string') fail(path, `must be a string (got ${describe(value)})`);
  return value;
}

function requireNonEmpty(value: unknown, path: string): string {
  if (typeof value !== 'string' || value.length === 0) fail(path, 'must be a non-empty string');
  return value;
}

/** A short, safe description of a bad value for error messages (no JSON.stringify of objects). */
function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return `a ${typeof value}`;
}
