import type { IndexEntry } from '@outrigger/kube';
import type { PodView } from './pod-view.js';

/** The pod index group of one profile's live ServiceAccounts in one namespace: built here only, never read back. */
export function liveGroup(profile: string, namespace: string): string {
  return JSON.stringify(['live', profile, namespace]);
}

/**
 * Where a pod is filed in the pod store's index: for each profile it counts for, its
 * ServiceAccount in that profile's group for its namespace, while it is not being deleted.
 * Counted by the store, they say which ServiceAccounts of one namespace have a live pod of a
 * profile without walking any other pod.
 */
export function podSubjectEntries(view: PodView): IndexEntry[] {
  if (view.deleting) return [];
  return view.profiles.map((profile): IndexEntry => [liveGroup(profile, view.namespace), view.serviceAccount]);
}

/** A profile's live ServiceAccounts in the given namespaces, by namespace (namespaces without any left out). */
export function liveByNamespace(keys: (group: string) => Iterable<string>, profile: string, namespaces: Iterable<string>): Map<string, string[]> {
  const byNamespace = new Map<string, string[]>();
  for (const namespace of namespaces) {
    const names = [...keys(liveGroup(profile, namespace))];
    if (names.length > 0) byNamespace.set(namespace, names);
  }
  return byNamespace;
}
