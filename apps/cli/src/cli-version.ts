import { readFileSync } from 'node:fs';

/** This CLI's version (its package's), recorded as the injector version by offline injection. */
export const CLI_VERSION: string = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;
