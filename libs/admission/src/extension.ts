import type { AdmissionOperation, GroupVersionKind, GroupVersionResource, UserInfo } from './admission-types.js';
import type { JsonObject } from './json-value.js';
import type { OwnedPaths } from './owned-paths.js';

/** What an extension knows about the request besides the pod itself. */
export interface AdmissionContext {
  readonly uid: string;
  /** From request.namespace: controller-made pods have no namespace in the object. */
  readonly namespace: string;
  /** From request.name; empty for generateName pods. */
  readonly name: string;
  readonly operation: AdmissionOperation;
  /** Extensions must behave exactly as for a real request (no side effects either way). */
  readonly dryRun: boolean;
  readonly userInfo: UserInfo;
  readonly kind: GroupVersionKind;
  readonly resource: GroupVersionResource;
  readonly subResource: string;
}

export interface MutatedResult {
  readonly type: 'mutated';
  readonly warnings: readonly string[];
  /** The audit decision; `injected` unless the extension says otherwise. */
  readonly decision: string;
}

export interface DeniedResult {
  readonly type: 'denied';
  readonly code: number;
  readonly message: string;
  /** Short slug for the audit annotation `denied:<reason>`. */
  readonly reason: string;
  readonly warnings: readonly string[];
}

export interface SkippedResult {
  readonly type: 'skipped';
  /** Short slug for the audit annotation `skipped:<reason>`. */
  readonly reason: string;
  readonly warnings: readonly string[];
}

export type ExtensionResult = MutatedResult | DeniedResult | SkippedResult;

/**
 * A pod mutation step. `mutate` changes `pod` in place (a private deep clone of the raw request
 * object) and reports what it did; it must be synchronous, pure and touch only `ownedPaths`.
 */
export interface Extension {
  readonly name: string;
  readonly ownedPaths: OwnedPaths;
  mutate(pod: JsonObject, ctx: AdmissionContext): ExtensionResult;
  /**
   * Why this pod is the extension's to judge (it opts in, or carries what only the extension may
   * write), e.g. `opts into an agent`; undefined for any other pod. After an internal error a pod
   * some extension claims is refused rather than admitted unchecked; any other is admitted.
   */
  claims?(pod: JsonObject, ctx: AdmissionContext): string | undefined;
}

export function mutated(options: { warnings?: readonly string[]; decision?: string } = {}): MutatedResult {
  return { type: 'mutated', warnings: options.warnings ?? [], decision: options.decision ?? 'injected' };
}

export function denied(
  code: number,
  message: string,
  reason: string,
  warnings: readonly string[] = [],
): DeniedResult {
  return { type: 'denied', code, message, reason, warnings };
}

export function skipped(reason: string, warnings: readonly string[] = []): SkippedResult {
  return { type: 'skipped', reason, warnings };
}
