import YAML from 'yaml';
import { err, ok, type Result } from '../result.js';
import { formatProfileIssues } from './format-issues.js';
import { profilesFileSchema, type AgentProfile } from './profile-schema.js';

/**
 * Parses a profiles file (YAML, one document with `profiles:`). Every problem is reported, one
 * per line, naming the profile and the field; nothing throws.
 */
export function parseProfiles(yamlText: string): Result<AgentProfile[]> {
  let document: YAML.Document.Parsed;
  try {
    document = YAML.parseDocument(yamlText, { prettyErrors: true, uniqueKeys: true });
  } catch (error) {
    return err(`profiles file: is not valid YAML (${error instanceof Error ? error.message : String(error)})`);
  }
  if (document.errors.length > 0) {
    return err(document.errors.map((error) => `profiles file: is not valid YAML (${oneLine(error.message)})`).join('\n'));
  }
  let raw: unknown;
  try {
    raw = document.toJS({ maxAliasCount: 100 });
  } catch (error) {
    return err(`profiles file: cannot be read (${error instanceof Error ? error.message : String(error)})`);
  }
  if (raw === null || raw === undefined) return err('profiles file: is empty');
  const parsed = profilesFileSchema.safeParse(raw, { reportInput: true });
  if (!parsed.success) return err(formatProfileIssues(parsed.error.issues, raw).join('\n'));
  return ok(parsed.data.profiles);
}

function oneLine(message: string): string {
  return message.split('\n')[0] ?? message;
}
