import { createHash } from 'node:crypto';
import { canonicalJson } from '@outrigger/admission';
import type { AgentProfile } from './profile-schema.js';

/** What profileHash gives; anything else in a pod's status annotation was not written by the injector. */
export const PROFILE_HASH_PATTERN = /^[0-9a-f]{16}$/;

/**
 * A short, stable fingerprint of a profile: sha256 over canonical JSON (sorted keys), first 16
 * hex digits. Key order in the profiles file never changes it; any value does.
 */
export function profileHash(profile: AgentProfile): string {
  // Profiles are immutable once parsed and the hash goes into every injected pod: compute it once.
  let hash = hashes.get(profile);
  if (hash === undefined) {
    hash = createHash('sha256').update(canonicalJson(profile)).digest('hex').slice(0, 16);
    hashes.set(profile, hash);
  }
  return hash;
}

const hashes = new WeakMap<AgentProfile, string>();
