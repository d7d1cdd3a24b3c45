import { denied, type DeniedResult } from '@outrigger/admission';
import { compileParameterPattern, isHttpUrl } from '@outrigger/agent-profiles';
import type { AgentProfile, ProfileParameter } from '@outrigger/agent-profiles';
import { forbiddenCharacter, literalEnvValue } from './literal-env.js';
import { quoteValue, type PodAnnotations } from './pod-annotations.js';

export const MISSING_PARAMETER_REASON = 'missing-parameter';
export const INVALID_PARAMETER_REASON = 'invalid-parameter';

/** Longer values are refused before any pattern runs, which bounds regex work per request. */
export const MAX_PARAMETER_LENGTH = 4096;

export interface ParameterEnv {
  readonly type: 'values';
  readonly env: readonly { readonly name: string; readonly value: string }[];
}

/**
 * Resolves each parameter from its annotation (or default) and checks it. The first problem is a
 * denial (422, the field is invalid) that names the annotation, the value and what was expected.
 * An empty value counts as missing. Values reach the agent literally (literalEnvValue).
 */
export function parameterEnv(
  profile: AgentProfile,
  annotations: PodAnnotations,
  podContainers: readonly string[],
): ParameterEnv | DeniedResult {
  const env: { name: string; value: string }[] = [];
  for (const parameter of profile.parameters) {
    const key = `${profile.annotationPrefix}${parameter.annotation}`;
    if (annotations.nonString.has(key)) return invalid(`annotation ${key} must be a string`);
    const given = annotations.values.get(key);
    const value = given === undefined || given === '' ? parameter.default : given;
    if (value === undefined) {
      if (parameter.required) return denied(422, `annotation ${key} is required`, MISSING_PARAMETER_REASON);
      continue;
    }
    // Named, not quoted: the value itself could reorder or break the message that shows it. (An
    // over-long value is refused by checkValue before anyone scans it.)
    const forbidden = value.length > MAX_PARAMETER_LENGTH ? undefined : forbiddenCharacter(value);
    if (forbidden !== undefined) return invalid(`annotation ${key}: the value contains the control or bidirectional-override character ${forbidden}`);
    const problem = checkValue(parameter, value, podContainers);
    if (problem !== undefined) return invalid(`annotation ${key}: value ${quoteValue(value)} ${problem}`);
    env.push({ name: parameter.env, value: literalEnvValue(value) });
  }
  return { type: 'values', env };
}

function checkValue(parameter: ProfileParameter, value: string, podContainers: readonly string[]): string | undefined {
  if (value.length > MAX_PARAMETER_LENGTH) return `is longer than ${MAX_PARAMETER_LENGTH} characters`;
  if (parameter.pattern !== undefined && !compileParameterPattern(parameter.pattern).test(value)) {
    return `does not match the pattern ^(?:${parameter.pattern})$`;
  }
  if (parameter.format === 'url' && !isHttpUrl(value)) return 'is not an http(s) URL';
  if (parameter.containerName && !podContainers.includes(value)) {
    return `does not name a container of the pod (containers: ${podContainers.join(', ') || 'none'})`;
  }
  return undefined;
}

function invalid(message: string): DeniedResult {
  return denied(422, message, INVALID_PARAMETER_REASON);
}
