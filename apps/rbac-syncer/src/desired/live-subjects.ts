import type { IndexEntry } from '@outrigger/kube';
import type { PodView } from './pod-view.js';

/** The pod index group of one profile's live ServiceAccounts in one namespace: built here only, never read back. */
export function liveGroup(profile: string, namespace: string): string {
  return JSON.stringify(['live', profile, namespace]);
}

/** The pod index group of one profile's ServiceAccounts in one namespace with a pod that shares the agent's token: built here only, never read back. */
export function sharingGroup(profile: string, namespace: string): string {
  return JSON.stringify(['sharing', profile, namespace]);
}

/**
 * Where a pod is filed in the pod store's index: for each profile it counts for, its
 * ServiceAccount in that profile's group for its namespace, while it is not being deleted; for
 * each profile whose agent's token it shares, in that profile's sharing group, until it is gone
 * (its token works until then). Counted by the store, they say which ServiceAccounts of one
 * namespace have a live pod of a profile, or one that shares its token, without walking any other pod.
 */
export function podSubjectEntries(view: PodView): IndexEntry[] {
  const sharing = view.sharesToken.map((profile): IndexEntry => [sharingGroup(profile, view.namespace), view.serviceAccount]);
  if (view.deleting) return sharing;
  return [...view.profiles.map((profile): IndexEntry => [liveGroup(profile, view.namespace), view.serviceAccount]), ...sharing];
}

/** A profile's live ServiceAccounts (`sharing`: those with a pod that shares its agent's token) in the given namespaces, by namespace (namespaces without any left out). */
export function liveByNamespace(keys: (group: string) => Iterable<string>, profile: string, namespaces: Iterable<string>, group: 'live' | 'sharing' = 'live'): Map<string, string[]> {
  const byNamespace = new Map<string, string[]>();
  for (const namespace of namespaces) {
    const names = [...keys(group === 'live' ? liveGroup(profile, namespace) : sharingGroup(profile, namespace))];
    if (names.length > 0) byNamespace.set(namespace, names);
  }
  return byNamespace;
}
