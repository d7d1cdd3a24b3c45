import { isJsonObject, type JsonObject, objectMember } from '@outrigger/admission';

/** The pod's annotations split into string values and keys whose value is not a string. */
export interface PodAnnotations {
  readonly values: ReadonlyMap<string, string>;
  /** Kubernetes would reject these; we only complain about the ones we read. */
  readonly nonString: ReadonlySet<string>;
}

export function podAnnotations(pod: JsonObject): PodAnnotations {
  const metadata = objectMember(pod, 'metadata');
  const annotations = metadata ? objectMember(metadata, 'annotations') : undefined;
  const values = new Map<string, string>();
  const nonString = new Set<string>();
  if (annotations && isJsonObject(annotations)) {
    for (const [key, value] of Object.entries(annotations)) {
      if (typeof value === 'string') values.set(key, value);
      else nonString.add(key);
    }
  }
  return { values, nonString };
}

/** A value as it appears in a denial: quoted, and cut so a huge annotation cannot flood a message. */
export function quoteValue(value: string, max = 64): string {
  return JSON.stringify(value.length > max ? `${value.slice(0, max)}…` : value);
}
