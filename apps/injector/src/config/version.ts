import { readFileSync } from 'node:fs';

/** The injector version recorded in every status annotation: this package's version. */
export const INJECTOR_VERSION: string = (() => {
  for (const candidate of ['../../package.json', '../../../../apps/injector/package.json']) {
    try {
      return (JSON.parse(readFileSync(new URL(candidate, import.meta.url), 'utf8')) as { version: string }).version;
    } catch {
      // try the next layout (source tree vs dist/apps/injector)
    }
  }
  return 'unknown';
})();
