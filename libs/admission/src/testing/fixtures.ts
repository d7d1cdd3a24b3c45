import { readFileSync } from 'node:fs';
import type { AdmissionReview } from '../admission-types.js';
import { parseAdmissionReview } from '../parse-admission-review.js';

/** Test-only: reads files under libs/admission/fixtures once and hands out deep clones. */
const FIXTURES = new URL('../../fixtures/', import.meta.url);
const cache = new Map<string, string>();

export function loadTextFixture(name: string): string {
  let text = cache.get(name);
  if (text === undefined) {
    text = readFileSync(new URL(name, FIXTURES), 'utf8');
    cache.set(name, text);
  }
  return text;
}

/** A fresh parse every call, so a test can mutate what it gets without affecting others. */
export function loadJsonFixture(name: string): unknown {
  return JSON.parse(loadTextFixture(name)) as unknown;
}

/** A review fixture from fixtures/reviews/, validated by the parser under test. */
export function loadReview(name: string): AdmissionReview {
  const parsed = parseAdmissionReview(loadJsonFixture(`reviews/${name}.json`));
  if (!parsed.ok) throw new Error(`fixture ${name} is not a valid AdmissionReview: ${parsed.error}`);
  return parsed.value;
}
