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

/** The ServiceAccounts filed under `profile` among the index keys in use. */
export function liveSubjects(keys: Iterable<string>, profile: string): SaSubject[] {
  const prefix = `${profile}${SEPARATOR}`;
  const subjects: SaSubject[] = [];
  for (const key of keys) {
    if (!key.startsWith(prefix)) continue;
    const [namespace = '', name = ''] = key.slice(prefix.length).split('/');
    subjects.push({ kind: 'ServiceAccount', namespace, name });
  }
  return subjects;
}
