/** A ServiceAccount subject of a (Cluster)RoleBinding. */
export interface SaSubject {
  readonly kind: 'ServiceAccount';
  readonly name: string;
  readonly namespace: string;
}

/** A ServiceAccount a binding lists as removed a moment ago, and until when (epoch ms) the exec guard judges it. */
export interface RevokedSubject extends SaSubject {
  readonly untilMs: number;
}

/** A binding's revoked list: sorted as normalizeSubjects sorts, one entry per ServiceAccount. */
export type RevokedSubjects = readonly RevokedSubject[];

/** Sorted, one entry per ServiceAccount (the later date where one is listed twice). */
export function normalizeRevoked(entries: Iterable<RevokedSubject>): RevokedSubject[] {
  const byKey = new Map<string, RevokedSubject>();
  for (const e of entries) {
    const key = subjectKey(e);
    if ((byKey.get(key)?.untilMs ?? -Infinity) < e.untilMs) byKey.set(key, { kind: 'ServiceAccount', name: e.name, namespace: e.namespace, untilMs: e.untilMs });
  }
  return [...byKey.values()].sort(compareSubjects);
}

export function subjectKey(s: { readonly namespace: string; readonly name: string }): string {
  return `${s.namespace}/${s.name}`;
}

export function compareSubjects(a: SaSubject, b: SaSubject): number {
  return a.namespace < b.namespace ? -1 : a.namespace > b.namespace ? 1 : a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

/** Sorted by namespace then name, without duplicates. */
export function normalizeSubjects(subjects: Iterable<SaSubject>): SaSubject[] {
  const byKey = new Map<string, SaSubject>();
  for (const s of subjects) byKey.set(subjectKey(s), { kind: 'ServiceAccount', name: s.name, namespace: s.namespace });
  return [...byKey.values()].sort(compareSubjects);
}

export function sameSubjects(a: readonly SaSubject[], b: readonly SaSubject[]): boolean {
  return a.length === b.length && a.every((s, i) => subjectKey(s) === subjectKey(b[i] as SaSubject));
}

export interface SubjectDiff {
  readonly added: SaSubject[];
  readonly removed: SaSubject[];
}

export function diffSubjects(before: readonly SaSubject[], after: readonly SaSubject[]): SubjectDiff {
  const had = new Set(before.map(subjectKey));
  const has = new Set(after.map(subjectKey));
  return { added: after.filter((s) => !had.has(subjectKey(s))), removed: before.filter((s) => !has.has(subjectKey(s))) };
}
