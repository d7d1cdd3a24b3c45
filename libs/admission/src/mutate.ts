import { deniedDecision, skippedDecision } from './audit.js';
import type { AdmissionContext, Extension, ExtensionResult } from './extension.js';
import { cloneJson, type JsonObject } from './json-value.js';
import { assertOwnedOps, mergeOwnedPaths } from './owned-paths.js';
import { computePatch, type PatchOperation } from './patch.js';

export const INTERNAL_ERROR_REASON = 'internal-error';

export interface ExtensionReport {
  readonly extension: string;
  readonly result: ExtensionResult;
}

/** An unexpected failure, handed back so the caller can log it and count it. */
export interface MutationFailure {
  /** The extension that threw, or undefined when the patch itself was rejected. */
  readonly extension: string | undefined;
  readonly error: unknown;
}

export interface AllowedMutation {
  readonly outcome: 'allowed';
  /** Empty when nothing changed. */
  readonly patch: readonly PatchOperation[];
  /** The pod after the patch: the mutated clone, or an untouched clone. */
  readonly pod: JsonObject;
  readonly warnings: readonly string[];
  readonly decision: string;
  readonly reports: readonly ExtensionReport[];
  readonly failure?: MutationFailure;
}

export interface DeniedMutation {
  readonly outcome: 'denied';
  readonly code: number;
  readonly message: string;
  readonly reason: string;
  readonly warnings: readonly string[];
  readonly decision: string;
  readonly reports: readonly ExtensionReport[];
  /** Set when the refusal is for an internal error on a pod an extension claims. */
  readonly failure?: MutationFailure;
}

export type PodMutation = AllowedMutation | DeniedMutation;

/**
 * Runs the extensions in order over one deep clone of the raw pod, then diffs clone against
 * original. The first denial wins. Never throws: after an exception (or a patch outside the owned
 * paths) a pod no extension claims is admitted unchanged with a warning (an error for every pod
 * would block the cluster for nothing that concerns it), and a pod one claims is refused (admitted,
 * it would run unchecked); the failure is returned for logging and metrics.
 */
export function mutatePod(original: JsonObject, ctx: AdmissionContext, extensions: readonly Extension[]): PodMutation {
  const reports: ExtensionReport[] = [];
  let current = 'none';
  try {
    const pod = cloneJson(original);
    for (const extension of extensions) {
      current = extension.name;
      const result = extension.mutate(pod, ctx);
      assertResultShape(result);
      reports.push({ extension: extension.name, result });
      if (result.type === 'denied') return denial(result, reports);
    }
    current = 'none';
    const patch = computePatch(original, pod);
    const mutators = extensions.filter((_, index) => reports[index]?.result.type === 'mutated');
    assertOwnedOps(patch, mergeOwnedPaths(mutators.map((extension) => extension.ownedPaths)), original);
    return {
      outcome: 'allowed',
      patch,
      pod,
      warnings: collectWarnings(reports),
      decision: decide(reports),
      reports,
    };
  } catch (error) {
    return internalFailure(original, ctx, extensions, current === 'none' ? undefined : current, error, reports);
  }
}

function denial(result: ExtensionResult & { type: 'denied' }, reports: ExtensionReport[]): DeniedMutation {
  return {
    outcome: 'denied',
    code: result.code,
    message: result.message,
    reason: result.reason,
    warnings: collectWarnings(reports),
    decision: deniedDecision(result.reason),
    reports,
  };
}

function internalFailure(
  original: JsonObject,
  ctx: AdmissionContext,
  extensions: readonly Extension[],
  extension: string | undefined,
  error: unknown,
  reports: ExtensionReport[],
): PodMutation {
  const where = extension === undefined ? 'while checking the patch' : `in extension ${extension}`;
  const failure = { extension, error };
  const claim = claimOf(original, ctx, extensions);
  if (claim !== undefined) {
    const message = `outrigger: internal error ${where} on a pod that ${claim}: refused rather than admitted unchecked; see the injector logs`;
    return { outcome: 'denied', code: 500, message, reason: INTERNAL_ERROR_REASON, warnings: [], decision: deniedDecision(INTERNAL_ERROR_REASON), reports, failure };
  }
  return {
    outcome: 'allowed',
    patch: [],
    pod: cloneJson(original),
    warnings: [`outrigger: pod admitted without mutation after an internal error ${where}; see the injector logs`],
    decision: skippedDecision(INTERNAL_ERROR_REASON),
    reports,
    failure,
  };
}

/** The first claim an extension makes on the pod; a claim that throws counts as one. */
function claimOf(pod: JsonObject, ctx: AdmissionContext, extensions: readonly Extension[]): string | undefined {
  for (const extension of extensions) {
    try {
      const claim = extension.claims?.(pod, ctx);
      if (claim !== undefined) return claim;
    } catch {
      return `extension ${extension.name} could not tell apart`;
    }
  }
  return undefined;
}

/** Mutations decide the audit value; with none, the skip reasons do. */
function decide(reports: readonly ExtensionReport[]): string {
  const mutations = reports.flatMap(({ result }) => (result.type === 'mutated' ? [result.decision] : []));
  if (mutations.length > 0) return [...new Set(mutations)].join(',');
  const skips = reports.flatMap(({ result }) => (result.type === 'skipped' ? [skippedDecision(result.reason)] : []));
  return skips.length > 0 ? [...new Set(skips)].join(',') : skippedDecision('no-extensions');
}

function collectWarnings(reports: readonly ExtensionReport[]): string[] {
  return [...new Set(reports.flatMap(({ result }) => result.warnings))];
}

/** Extensions are plain objects from other code: check what they return before trusting it. */
function assertResultShape(result: ExtensionResult): void {
  const valid =
    typeof result === 'object' &&
    result !== null &&
    Array.isArray(result.warnings) &&
    ((result.type === 'mutated' && typeof result.decision === 'string') ||
      (result.type === 'skipped' && typeof result.reason === 'string') ||
      (result.type === 'denied' &&
        Number.isInteger(result.code) &&
        result.code >= 400 &&
        result.code < 500 &&
        typeof result.message === 'string' &&
        typeof result.reason === 'string'));
  if (!valid) throw new TypeError('extension returned a malformed result');
}
