import { readFileSync } from 'node:fs';

/**
 * The injector version recorded in every status annotation: the build's, from the VERSION file the
 * image build writes beside main.js (tools/images/build-version.sh: the release tag, else the package
 * version and commit); a build without one (local runs, tests) reports its package version and +dev.
 */
export const INJECTOR_VERSION: string = injectorVersion(readFirst(['../VERSION']), packageVersion());

export function injectorVersion(baked: string | undefined, packageVersion: string | undefined): string {
  return baked?.trim() || `${packageVersion ?? 'unknown'}+dev`;
}

function packageVersion(): string | undefined {
  // The source tree, then dist/apps/injector beside apps/injector (the workspace and the image alike).
  const text = readFirst(['../../package.json', '../../../../apps/injector/package.json']);
  return text === undefined ? undefined : (JSON.parse(text) as { version: string }).version;
}

function readFirst(candidates: readonly string[]): string | undefined {
  for (const candidate of candidates) {
    try {
      return readFileSync(new URL(candidate, import.meta.url), 'utf8');
    } catch {
      // not in this layout
    }
  }
  return undefined;
}
