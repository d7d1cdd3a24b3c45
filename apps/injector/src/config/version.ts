import { readServiceVersion } from '@outrigger/service';

/** The injector version recorded in every status annotation and reported on /readyz. */
export const INJECTOR_VERSION: string = readServiceVersion(import.meta.url, 'injector');
