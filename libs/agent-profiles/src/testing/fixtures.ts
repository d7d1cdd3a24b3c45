import { readFileSync } from 'node:fs';

/** Test-only: the admission libraries share one fixture tree, libs/admission/fixtures. */
const FIXTURES = new URL('../../../admission/fixtures/', import.meta.url);

export function loadTextFixture(name: string): string {
  return readFileSync(new URL(name, FIXTURES), 'utf8');
}
