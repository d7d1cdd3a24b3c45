import { readFile } from 'node:fs/promises';
import { err, type Result } from '../result.js';
import { parseProfiles } from './parse-profiles.js';
import type { AgentProfile } from './profile-schema.js';
import { XXL_JOB_PROFILE } from './xxl-job-profile.js';

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

/** The profiles in `path`, or the reference xxl-job profile when no file is configured. */
export async function loadProfilesOrDefault(path: string | undefined): Promise<Result<AgentProfile[]>> {
  if (path === undefined || path === '') return { ok: true, value: [XXL_JOB_PROFILE] };
  return loadProfilesFile(path);
}
