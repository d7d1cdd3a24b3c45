import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SYNCER_CONFINEMENT_FILE, syncerConfinementYaml } from './syncer-confinement.js';

describe('the rbac-syncer confinement', () => {
  it(`${SYNCER_CONFINEMENT_FILE} is generated from it (npm run generate:exec-guard)`, () => {
    expect(readFileSync(new URL(`../../../${SYNCER_CONFINEMENT_FILE}`, import.meta.url), 'utf8')).toBe(syncerConfinementYaml());
  });
});
