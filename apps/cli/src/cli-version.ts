import { readFileSync } from 'node:fs';
import { embedded } from './embedded.js';

/** This CLI's version (its package's), recorded as the injector version by offline injection. */
export const CLI_VERSION: string = embedded?.version ?? (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;
