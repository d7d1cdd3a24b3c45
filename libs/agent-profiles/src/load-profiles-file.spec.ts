import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadProfilesFile } from './load-profiles-file.js';
import { REFERENCE_PROFILE_FILE } from './reference-profile.js';
import { loadTextFixture } from './testing/fixtures.js';

describe('loadProfilesFile', () => {
  it('reads and parses a profiles file', async () => {
    // Two profiles in one file: the reference profile (its one copy) and the tracing fixture.
    const twoProfiles = join(mkdtempSync(join(tmpdir(), 'outrigger-profiles-')), 'profiles.yaml');
    writeFileSync(twoProfiles, [readFileSync(REFERENCE_PROFILE_FILE, 'utf8'), loadTextFixture('profiles/tracing.yaml')].join('\n---\n'));
    const result = await loadProfilesFile(twoProfiles);
    expect(result.ok && result.value.map((profile) => profile.name)).toEqual(['xxl-job', 'tracing']);
  });

  it('names the file when it cannot be read', async () => {
    const result = await loadProfilesFile('/nonexistent/profiles.yaml');
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error).toMatch(/^\/nonexistent\/profiles\.yaml: cannot be read \(ENOENT/);
  });

  it('prefixes every parse error with the file path', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'outrigger-profiles-')), 'profiles.yaml');
    writeFileSync(path, 'apiVersion: outrigger.dev/v1alpha1\nkind: AgentProfile\nmetadata: { name: Bad }\nspec: {}\n');
    const result = await loadProfilesFile(path);
    expect(result.ok).toBe(false);
    if (!result.ok) {
      for (const line of result.error.split('\n')) expect(line.startsWith(`${path}: AgentProfile Bad: `)).toBe(true);
    }
  });
});
