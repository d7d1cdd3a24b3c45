import YAML from 'yaml';
import { err, ok, type Result } from '@outrigger/admission';
import { agentProfileObject, parseAgentProfileDocuments } from './agent-profile-object.js';
import { formatProfileIssues } from './format-issues.js';
import { profilesFileSchema, type AgentProfile } from './profile-schema.js';

/**
 * Parses a profiles file: AgentProfile objects as YAML documents (what `kubectl apply` takes),
 * the format PROFILES_FILE holds. Every problem is reported, one per line; nothing throws.
 */
export function parseProfiles(yamlText: string): Result<AgentProfile[]> {
  return parseAgentProfileDocuments(yamlText);
}

/**
 * Converts the former profiles file (one document, `profiles:` followed by a list) into
 * AgentProfile documents. The old file is validated first, so what comes out is accepted.
 */
export function convertProfilesFile(yamlText: string): Result<string> {
  let raw: unknown;
  try {
    raw = YAML.parse(yamlText, { uniqueKeys: true, maxAliasCount: 100 });
  } catch (error) {
    return err(`is not valid YAML (${error instanceof Error ? error.message.split('\n')[0] : String(error)})`);
  }
  const parsed = profilesFileSchema.safeParse(raw);
  if (!parsed.success) return err(formatProfileIssues(parsed.error.issues, raw).join('\n'));
  return ok(parsed.data.profiles.map((profile) => YAML.stringify(agentProfileObject(profile), { lineWidth: 0 })).join('---\n'));
}
