import { readFileSync } from 'node:fs';
import type { AdmissionReview } from '../admission-types.js';
import { isJsonObject, type JsonObject } from '../json-value.js';
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

export function requestObject(review: AdmissionReview): JsonObject {
  const object = review.request.object;
  if (!object) throw new Error('fixture has no request.object');
  return object;
}

/** A copy of the review whose pod annotations are changed: a string sets, null removes. */
export function withAnnotations(review: AdmissionReview, changes: Record<string, string | null>): AdmissionReview {
  const copy = structuredClone(review);
  const metadata = requestObject(copy)['metadata'];
  if (!isJsonObject(metadata)) throw new Error('fixture pod has no metadata');
  const annotations = isJsonObject(metadata['annotations']) ? metadata['annotations'] : {};
  for (const [key, value] of Object.entries(changes)) {
    if (value === null) delete annotations[key];
    else annotations[key] = value;
  }
  metadata['annotations'] = annotations;
  return copy;
}

/** A copy of the review with another request namespace (the object keeps its own). */
export function inNamespace(review: AdmissionReview, namespace: string): AdmissionReview {
  return { ...structuredClone(review), request: { ...structuredClone(review.request), namespace } };
}
