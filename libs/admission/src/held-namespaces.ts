/** What a reader of the labelled namespaces holds: how many, and their `namespacesDigest`. */
export interface NamespacesHeld {
  readonly held: number;
  readonly digest: string;
}

/** The annotations by which the rbac-syncer's leader publishes, on its Lease, the namespaces it acts on. */
export const NAMESPACES_HELD_ANNOTATIONS = {
  held: 'outrigger.dev/namespaces-held',
  digest: 'outrigger.dev/namespaces-digest',
} as const;

export function namespacesHeldAnnotations({ held, digest }: NamespacesHeld): Record<string, string> {
  return { [NAMESPACES_HELD_ANNOTATIONS.held]: String(held), [NAMESPACES_HELD_ANNOTATIONS.digest]: digest };
}

/** The view the annotations publish; undefined when either is missing or malformed (a Lease of another writer). */
export function namespacesHeldFrom(annotations: Readonly<Record<string, unknown>> | undefined): NamespacesHeld | undefined {
  const held = annotations?.[NAMESPACES_HELD_ANNOTATIONS.held];
  const digest = annotations?.[NAMESPACES_HELD_ANNOTATIONS.digest];
  if (typeof held !== 'string' || !/^(0|[1-9][0-9]*)$/.test(held) || typeof digest !== 'string' || !/^[0-9a-f]{16}$/.test(digest)) return undefined;
  return { held: Number(held), digest };
}
