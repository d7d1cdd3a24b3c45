import { createHash } from 'node:crypto';
import { canonicalJson } from '../canonical-json.js';
import type { AgentProfile } from './profile-schema.js';

/**
 * A short, stable fingerprint of a profile: sha256 over canonical JSON (sorted keys), first 16
 * hex digits. Key order in the profiles file never changes it; any value does.
 */
export function profileHash(profile: AgentProfile): string {
  return createHash('sha256').update(canonicalJson(profile)).digest('hex').slice(0, 16);
}
