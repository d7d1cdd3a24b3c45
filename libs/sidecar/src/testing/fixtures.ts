import { readFileSync } from 'node:fs';
import { isJsonObject, parseAdmissionReview, type AdmissionReview, type JsonObject } from '@outrigger/admission';

/** Test-only: the admission libraries share one fixture tree, libs/admission/fixtures. */
const FIXTURES = new URL('../../../admission/fixtures/', import.meta.url);

export function loadTextFixture(name: string): string {
  return readFileSync(new URL(name, FIXTURES), 'utf8');
}

/** A review fixture from fixtures/reviews/, validated by the parser. */
export function loadReview(name: string): AdmissionReview {
  const parsed = parseAdmissionReview(JSON.parse(loadTextFixture(`reviews/${name}.json`)) as unknown);
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
