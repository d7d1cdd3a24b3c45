/**
 * JSON with object keys sorted at every level, so equal data always gives equal text (and
 * hashes). Undefined members are left out, as JSON.stringify does.
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (typeof value !== 'object' || value === null) return value;
  const sorted: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) {
    const member = (value as Record<string, unknown>)[key];
    if (member !== undefined) Object.defineProperty(sorted, key, { value: sortKeys(member), enumerable: true });
  }
  return sorted;
}
