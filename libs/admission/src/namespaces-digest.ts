import { createHash } from 'node:crypto';

/** A namespace as the digest sees it: its name and the resourceVersion of the object held. */
export interface HeldNamespace {
  readonly name: string;
  readonly resourceVersion: string;
}

/**
 * A short digest of a set of namespaces at their resourceVersions, in any order: equal for two
 * readers exactly when they hold the same objects. The injector reports it for the namespaces
 * labelled for injection and `outrigger check` compares it with its own list, since a namespace's
 * labels and annotations have no generation to compare. It detects lag, it does not authenticate.
 */
export function namespacesDigest(namespaces: Iterable<HeldNamespace>): string {
  const lines = [...namespaces].map(({ name, resourceVersion }) => `${name} ${resourceVersion}\n`).sort();
  const hash = createHash('sha256');
  for (const line of lines) hash.update(line);
  return hash.digest('hex').slice(0, 16);
}
