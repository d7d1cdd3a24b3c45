import type { PodView } from './pod-view.js';
import type { SaSubject } from './subjects.js';

/** Between a profile name and a subject key in an index key; neither a profile nor a namespace may contain it. */
const SEPARATOR = ' ';

/**
 * The index keys a pod is filed under: one per profile it counts for, naming its ServiceAccount,
 * while it is not being deleted. Counted by the pod store, they say which ServiceAccounts have a
 * live pod of a profile without walking every pod.
 */
export function podSubjectKeys(view: PodView): string[] {
  if (view.deleting) return [];
  return view.profiles.map((profile) => `${profile}${SEPARATOR}${view.namespace}/${view.serviceAccount}`);
}

/** The ServiceAccounts filed under `profile` among the index keys in use, by namespace. */
export function liveByNamespace(keys: Iterable<string>, profile: string): Map<string, string[]> {
  const prefix = `${profile}${SEPARATOR}`;
  const byNamespace = new Map<string, string[]>();
  for (const key of keys) {
    if (!key.startsWith(prefix)) continue;
    const [namespace = '', name = ''] = key.slice(prefix.length).split('/');
    const names = byNamespace.get(namespace);
    if (names) names.push(name);
    else byNamespace.set(namespace, [name]);
  }
  return byNamespace;
}

/** The same, as subjects. */
export function liveSubjects(keys: Iterable<string>, profile: string): SaSubject[] {
  return [...liveByNamespace(keys, profile)].flatMap(([namespace, names]) => names.map((name) => ({ kind: 'ServiceAccount' as const, namespace, name })));
}
