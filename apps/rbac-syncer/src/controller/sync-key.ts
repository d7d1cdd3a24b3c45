/**
 * A unit of the syncer's work: a whole profile (its ClusterRole, the exec guard, its status and
 * every namespace), or one namespace's bindings of a profile, planned alone on that namespace's changes.
 */
export interface SyncKey {
  readonly profile: string;
  readonly namespace?: string;
}

/** The work queue tells keys apart by this; it hands back the key itself, never this. */
export function syncKeyId(key: SyncKey): string {
  return JSON.stringify([key.profile, key.namespace ?? null]);
}

/** For logs: `profile` or `profile in namespace`. */
export function describeSyncKey(key: SyncKey): string {
  return key.namespace === undefined ? key.profile : `${key.profile} in namespace ${key.namespace}`;
}
