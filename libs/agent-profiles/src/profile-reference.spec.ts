import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';
import { describe, expect, it } from 'vitest';
import { parseAgentProfileDocuments } from './agent-profile-object.js';
import { FIELD_NOTES, PROFILE_REFERENCE_FILE, profileReferenceMarkdown, readProfileExamples, referenceRows } from './profile-reference.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const examples = readProfileExamples(root);
const rows = referenceRows();

describe('the AgentProfile reference', () => {
  it('describes every field of the spec, from the schema or a note, never both, and has no note for a field that does not exist', () => {
    expect(rows.filter((r) => !r.description).map((r) => r.field)).toEqual([]);
    const fields = new Set(rows.map((r) => r.field));
    expect(Object.keys(FIELD_NOTES).filter((f) => !fields.has(f))).toEqual([]);
    const described = rows.filter((r) => FIELD_NOTES[r.field] !== undefined && r.description !== FIELD_NOTES[r.field]).map((r) => r.field);
    expect(described).toEqual([]);
  });

  it('lists the fields that matter by their schema facts: required, defaults, enums, Kubernetes shapes', () => {
    const row = (field: string) => rows.find((r) => r.field === field);
    expect(row('annotationPrefix')?.presence).toBe('required');
    expect(row('container.image')?.presence).toBe('required');
    expect(row('nativeSidecar')?.presence).toBe('default `false`');
    expect(row('dangerouslyAllowPodSecurity')?.type).toBe('one of `baseline`, `privileged`');
    expect(row('container.startupProbe')?.type).toMatch(/^Kubernetes Probe: `exec`, `httpGet`, `tcpSocket`, `grpc`/);
    expect(row('overrides.resources[].resource')?.type).toBe('one of `requests.cpu`, `requests.memory`, `limits.cpu`, `limits.memory`');
    // Below a Kubernetes shape nothing is listed on its own row.
    expect(rows.some((r) => r.field.startsWith('container.startupProbe.'))).toBe(false);
  });

  it('has examples that the services\' schema accepts, each named as its file says, together using every field of the spec', () => {
    expect(examples.length).toBeGreaterThan(0);
    const used = new Set<string>();
    for (const { file, text } of examples) {
      const parsed = parseAgentProfileDocuments(text);
      expect(parsed.ok ? '' : parsed.error, file).toBe('');
      expect(text.startsWith('# '), `${file} opens with its title`).toBe(true);
      for (const key of Object.keys((YAML.parse(text) as { spec: object }).spec)) used.add(key);
    }
    const topLevel = rows.filter((r) => !r.field.includes('.')).map((r) => r.field);
    expect(topLevel.filter((f) => !used.has(f))).toEqual([]);
  });

  it(`${PROFILE_REFERENCE_FILE} is generated from the schema and the examples (npm run generate:profile-reference)`, () => {
    expect(readFileSync(new URL(`../../../${PROFILE_REFERENCE_FILE}`, import.meta.url), 'utf8')).toBe(profileReferenceMarkdown(examples));
  });
});
