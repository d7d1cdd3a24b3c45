/**
 * What the profile schema tells the AgentProfile CRD beside each zod check (via `.meta()`): the
 * same rule as an OpenAPI keyword or a CEL `x-kubernetes-validations` rule. The limits bound the
 * API server's CEL cost estimate; they are far above what a profile needs.
 */

/** Items in any list a CEL rule walks (parameters, rules, their verbs, …). */
export const LIST_MAX = 64;
/** Names: env vars, resources, verbs, API groups. */
export const NAME_MAX = 253;
/** Free strings a rule reads: images, patterns, field paths. */
export const STRING_MAX = 4096;

export interface CelRule {
  readonly rule: string;
  readonly message: string;
  readonly fieldPath?: string;
}

export function celRule(rule: string, message: string, fieldPath?: string): CelRule {
  return { rule, message, ...(fieldPath === undefined ? {} : { fieldPath }) };
}

/** A list whose items are identified by `key`: the API server refuses duplicates itself. */
export function listMap(key: string): Record<string, unknown> {
  return { 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': [key], maxItems: LIST_MAX };
}

/** A CEL string literal. */
export function celString(value: string): string {
  return `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}
