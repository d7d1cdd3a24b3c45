import type { z } from 'zod';

/**
 * Turns zod issues into lines that name the profile and the field, e.g.
 * `profiles[0] (xxl-job).parameters[1].pattern: is not an RE2 regular expression (the syntax of Kubernetes patterns): missing closing ): `(``.
 * `raw` is the parsed YAML, used to look up each profile's name.
 */
export function formatProfileIssues(issues: readonly z.core.$ZodIssue[], raw: unknown): string[] {
  return issues.map((issue) => `${formatPath(issue.path, raw)}: ${describeIssue(issue)}`);
}

function formatPath(path: readonly PropertyKey[], raw: unknown): string {
  if (path.length === 0) return 'profiles file';
  let text = '';
  path.forEach((segment, index) => {
    if (typeof segment === 'number') {
      text += `[${segment}]`;
      if (index === 1 && path[0] === 'profiles') text += profileLabel(raw, segment);
    } else {
      text += text === '' ? String(segment) : `.${String(segment)}`;
    }
  });
  return text;
}

function profileLabel(raw: unknown, index: number): string {
  const profiles = (raw as { profiles?: unknown } | null)?.profiles;
  const name = Array.isArray(profiles) ? (profiles[index] as { name?: unknown } | null)?.name : undefined;
  return typeof name === 'string' && name !== '' ? ` (${name})` : '';
}

export function describeIssue(issue: z.core.$ZodIssue): string {
  if (issue.code === 'invalid_type' && issue.input === undefined) return 'is required';
  if (issue.code === 'unrecognized_keys') {
    return `unknown field${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((key) => JSON.stringify(key)).join(', ')}`;
  }
  return issue.message;
}
