import { readFileSync } from 'node:fs';

/**
 * A service's version: the build's, from the VERSION file the image build writes beside main.js
 * (tools/images/build-version.sh: the release tag, else the package version and commit); a build
 * without one (local runs, tests) reports its package version and +dev.
 */
export function serviceVersion(baked: string | undefined, packageVersion: string | undefined): string {
  return baked?.trim() || `${packageVersion ?? 'unknown'}+dev`;
}

/**
 * `serviceVersion` of app `app`, read relative to `configModuleUrl`: the `import.meta.url` of a module
 * one directory below the app's root (its `config/`), in the source tree and in dist/apps/<app> alike.
 */
export function readServiceVersion(configModuleUrl: string, app: string): string {
  // The source tree's package.json, then the one beside dist/apps/<app> (the workspace and the image alike).
  const pkg = readFirst(configModuleUrl, ['../../package.json', `../../../../apps/${app}/package.json`]);
  return serviceVersion(readFirst(configModuleUrl, ['../VERSION']), pkg === undefined ? undefined : (JSON.parse(pkg) as { version: string }).version);
}

function readFirst(base: string, candidates: readonly string[]): string | undefined {
  for (const candidate of candidates) {
    try {
      return readFileSync(new URL(candidate, base), 'utf8');
    } catch {
      // not in this layout
    }
  }
  return undefined;
}
