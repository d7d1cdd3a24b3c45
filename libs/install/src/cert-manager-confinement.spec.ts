import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CERT_MANAGER_CONFINEMENT_FILE, certManagerConfinementYaml } from './cert-manager-confinement.js';

describe('the cert-manager confinement', () => {
  it(`${CERT_MANAGER_CONFINEMENT_FILE} is generated from it (npm run generate:exec-guard)`, () => {
    expect(readFileSync(new URL(`../../../${CERT_MANAGER_CONFINEMENT_FILE}`, import.meta.url), 'utf8')).toBe(certManagerConfinementYaml());
  });
});
