import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadProfilesFile, loadProfilesOrDefault } from './load-profiles-file.js';
import { XXL_JOB_PROFILE } from './xxl-job-profile.js';

const twoProfiles = fileURLToPath(new URL('../../fixtures/profiles/two-profiles.yaml', import.meta.url));

describe('loadProfilesFile', () => {
  it('reads and parses a profiles file', async () => {
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
    writeFileSync(path, 'profiles:\n  - name: Bad\n');
    const result = await loadProfilesFile(path);
    expect(result.ok).toBe(false);
    if (!result.ok) {
      for (const line of result.error.split('\n')) expect(line.startsWith(`${path}: profiles[0] (Bad).`)).toBe(true);
    }
  });
});

describe('loadProfilesOrDefault', () => {
  it('falls back to the reference profile when no file is configured', async () => {
    expect(await loadProfilesOrDefault(undefined)).toEqual({ ok: true, value: [XXL_JOB_PROFILE] });
    expect(await loadProfilesOrDefault('')).toEqual({ ok: true, value: [XXL_JOB_PROFILE] });
  });

  it('reads the file when one is configured', async () => {
    const result = await loadProfilesOrDefault(twoProfiles);
    expect(result.ok && result.value).toHaveLength(2);
  });
});
