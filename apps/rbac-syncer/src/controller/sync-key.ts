/**
 * A unit of the syncer's work: a whole profile (its ClusterRole, the exec guard, every namespace,
 * its status), one namespace's bindings of a profile (planned alone on that namespace's changes),
 * or a profile's status and agent counts (from what its namespaces' last plans left).
 */
export type SyncKey =
  | { readonly step: 'profile'; readonly profile: string }
  | { readonly step: 'namespace'; readonly profile: string; readonly namespace: string }
  | { readonly step: 'status'; readonly profile: string };

export const profileKey = (profile: string): SyncKey => ({ step: 'profile', profile });
export const namespaceKey = (profile: string, namespace: string): SyncKey => ({ step: 'namespace', profile, namespace });
export const statusKey = (profile: string): SyncKey => ({ step: 'status', profile });

/** The work queue tells keys apart by this; it hands back the key itself, never this. */
export function syncKeyId(key: SyncKey): string {
  return JSON.stringify([key.step, key.profile, key.step === 'namespace' ? key.namespace : null]);
}

/** For logs. */
export function describeSyncKey(key: SyncKey): string {
  return key.step === 'namespace' ? `${key.profile} in namespace ${key.namespace}` : key.step === 'status' ? `the status of ${key.profile}` : key.profile;
}
