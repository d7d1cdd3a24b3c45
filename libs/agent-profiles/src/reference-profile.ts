import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseAgentProfileDocuments } from './agent-profile-object.js';
import type { AgentProfile } from './profile-schema.js';

/** The reference profile's one copy, deploy/base/profiles/xxl-job.yaml (same depth from src/ and dist/). */
export const REFERENCE_PROFILE_FILE = fileURLToPath(new URL('../../../deploy/base/profiles/xxl-job.yaml', import.meta.url));

/** The reference xxl-job profile, read from its file in the repository (tests and offline tools). */
export function referenceProfile(): AgentProfile {
  const parsed = parseAgentProfileDocuments(readFileSync(REFERENCE_PROFILE_FILE, 'utf8'));
  if (!parsed.ok || parsed.value.length !== 1) throw new Error(`${REFERENCE_PROFILE_FILE}: ${parsed.ok ? 'must hold exactly one AgentProfile' : parsed.error}`);
  return parsed.value[0] as AgentProfile;
}
