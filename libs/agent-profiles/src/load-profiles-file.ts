import { readFile } from 'node:fs/promises';
import { err, type Result } from '@outrigger/admission';
import { parseProfiles } from './parse-profiles.js';
import type { AgentProfile } from './profile-schema.js';

/** Reads and parses a profiles file; errors are prefixed with the path. The only I/O here. */
export async function loadProfilesFile(path: string): Promise<Result<AgentProfile[]>> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    return err(`${path}: cannot be read (${error instanceof Error ? error.message : String(error)})`);
  }
  const parsed = parseProfiles(text);
  return parsed.ok ? parsed : err(parsed.error.split('\n').map((line) => `${path}: ${line}`).join('\n'));
}
