import { classifyApiError } from './api-error.js';
import type { KubeObject } from './kube-object.js';
import { kubeJson, type KubeClient } from './kube-request.js';
import { resourcePath } from './api-path.js';
import { discoverResource, objectPath, type ObjectRef } from './resource-discovery.js';

export interface ApplyOptions {
  /** Who owns the applied fields, e.g. `outrigger-rbac-syncer`. Keep it stable across versions. */
  readonly fieldManager: string;
  /** Take over fields another manager owns instead of failing with 409 Conflict. */
  readonly force?: boolean;
  /** Per request; 30 s by default. */
  readonly timeoutMs?: number;
}

const DEFAULT_TIMEOUT_MS = 30_000;

/**
 * Server-side apply: `obj` is the complete intent of `fieldManager` (fields it owned before and
 * leaves out here are removed, fields of other managers are left alone). Idempotent: applying
 * the same intent again changes nothing, not even the resourceVersion. Returns the live object.
 */
export async function applyObject<T extends KubeObject = KubeObject>(kc: KubeClient, obj: KubeObject, options: ApplyOptions): Promise<T> {
  const path = await objectPath(kc, refOf(obj));
  return kubeJson<T>(kc, {
    method: 'PATCH',
    path,
    timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    query: { fieldManager: options.fieldManager, force: options.force ? true : undefined },
    contentType: 'application/apply-patch+yaml',
    body: obj, // JSON is YAML
  });
}

/**
 * Creates `obj` (POST): unlike apply, it fails with 409 AlreadyExists when an object of that name
 * exists, so an object someone else made is never taken over. Returns the stored object.
 */
export async function createObject<T extends KubeObject = KubeObject>(kc: KubeClient, obj: KubeObject, options: ApplyOptions): Promise<T> {
  const ref = refOf(obj);
  const { resource, namespaced } = await discoverResource(kc, ref.apiVersion, ref.kind);
  if (namespaced && !ref.namespace) throw new Error(`${ref.kind} ${ref.name} is namespaced but has no namespace`);
  return kubeJson<T>(kc, {
    method: 'POST',
    path: resourcePath({ apiVersion: ref.apiVersion, resource, namespace: namespaced ? ref.namespace : undefined }),
    timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    query: { fieldManager: options.fieldManager },
    body: obj,
  });
}

/**
 * A JSON merge patch (RFC 7386) of an existing object: `null` removes a field. Unlike apply it
 * never creates the object: false when it is gone.
 */
export async function mergePatchObject(kc: KubeClient, ref: ObjectRef, patch: object, options: ApplyOptions): Promise<boolean> {
  const path = await objectPath(kc, ref);
  try {
    await kubeJson(kc, {
      method: 'PATCH',
      path,
      timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      query: { fieldManager: options.fieldManager },
      contentType: 'application/merge-patch+json',
      body: patch,
    });
    return true;
  } catch (error) {
    if (classifyApiError(error).kind === 'notFound') return false;
    throw error;
  }
}

/** One RFC 6902 operation. */
export type JsonPatchOperation =
  | { readonly op: 'add' | 'replace' | 'test'; readonly path: string; readonly value: unknown }
  | { readonly op: 'remove'; readonly path: string }
  | { readonly op: 'move' | 'copy'; readonly from: string; readonly path: string };

export type GuardedPatchResult<T> =
  | { readonly applied: true; readonly object: T }
  /** The object changed since `resourceVersion` was read (or is gone): read it again and decide anew. */
  | { readonly applied: false; readonly reason: 'conflict' | 'notFound'; readonly currentResourceVersion?: string };

export interface GuardedPatchOptions {
  readonly fieldManager?: string;
  /** Per request; 30 s by default. */
  readonly timeoutMs?: number;
}

/**
 * A JSON patch that applies only if the object is still at `resourceVersion`, so exactly the
 * listed paths change and nothing else is overwritten (e.g. only a webhook's caBundle). A stale
 * version is reported as `conflict`, not thrown.
 */
export async function jsonPatchGuarded<T extends KubeObject = KubeObject>(
  kc: KubeClient,
  ref: ObjectRef,
  resourceVersion: string,
  operations: readonly JsonPatchOperation[],
  options: GuardedPatchOptions = {},
): Promise<GuardedPatchResult<T>> {
  const path = await objectPath(kc, ref);
  try {
    const object = await kubeJson<T>(kc, {
      method: 'PATCH',
      path,
      timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      query: { fieldManager: options.fieldManager },
      contentType: 'application/json-patch+json',
      body: [{ op: 'test', path: '/metadata/resourceVersion', value: resourceVersion }, ...operations],
    });
    return { applied: true, object };
  } catch (error) {
    const { kind } = classifyApiError(error);
    if (kind === 'notFound') return { applied: false, reason: 'notFound' };
    // A failed `test` op is a bare 422 "the server rejected our request" (no detail), so tell it
    // apart from a patch that is invalid in itself by looking at the current version.
    if (kind !== 'invalid' && kind !== 'conflict') throw error;
    const current = await readObject(kc, ref, options);
    if (!current) return { applied: false, reason: 'notFound' };
    const currentResourceVersion = current.metadata?.resourceVersion;
    if (currentResourceVersion !== resourceVersion) return { applied: false, reason: 'conflict', currentResourceVersion };
    throw error;
  }
}

/** The object as raw JSON, or undefined when it does not exist. */
export async function readObject<T extends KubeObject = KubeObject>(
  kc: KubeClient,
  ref: ObjectRef,
  options: { readonly timeoutMs?: number } = {},
): Promise<T | undefined> {
  try {
    return await kubeJson<T>(kc, { path: await objectPath(kc, ref), timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS });
  } catch (error) {
    if (classifyApiError(error).kind === 'notFound') return undefined;
    throw error;
  }
}

/** Deletes the object; true if it was there, false if it was already gone. */
export async function deleteObject(kc: KubeClient, ref: ObjectRef, options: { readonly timeoutMs?: number; readonly resourceVersion?: string } = {}): Promise<boolean> {
  // A precondition: a version other than the one given fails with 409 Conflict and deletes nothing.
  const body = options.resourceVersion === undefined ? undefined : { apiVersion: 'v1', kind: 'DeleteOptions', preconditions: { resourceVersion: options.resourceVersion } };
  try {
    await kubeJson(kc, { method: 'DELETE', path: await objectPath(kc, ref), timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS, body });
    return true;
  } catch (error) {
    if (classifyApiError(error).kind === 'notFound') return false;
    throw error;
  }
}

/** Every object of a kind (in every namespace, for a namespaced kind) matching `labelSelector`. */
export async function listObjects<T extends KubeObject = KubeObject>(
  kc: KubeClient,
  type: { readonly apiVersion: string; readonly kind: string },
  options: { readonly labelSelector?: string; readonly timeoutMs?: number } = {},
): Promise<T[]> {
  const { resource } = await discoverResource(kc, type.apiVersion, type.kind);
  const list = await kubeJson<{ items?: T[] }>(kc, {
    path: resourcePath({ apiVersion: type.apiVersion, resource }),
    query: { labelSelector: options.labelSelector },
    timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
  });
  return list.items ?? [];
}

/** RFC 6901: `~` becomes `~0` before `/` becomes `~1` (the other order corrupts `~1` in keys). */
export function jsonPointer(...segments: ReadonlyArray<string | number>): string {
  return segments.map((s) => '/' + String(s).replace(/~/g, '~0').replace(/\//g, '~1')).join('');
}

function refOf(obj: KubeObject): ObjectRef {
  const { apiVersion, kind } = obj;
  const name = obj.metadata?.name;
  if (!apiVersion || !kind || !name) throw new Error('applyObject needs apiVersion, kind and metadata.name');
  return { apiVersion, kind, name, namespace: obj.metadata?.namespace };
}
