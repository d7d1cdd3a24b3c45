import { readServiceVersion } from '@outrigger/service';

/** The rbac-syncer's version, stamped on its Lease while it leads. */
export const RBAC_SYNCER_VERSION: string = readServiceVersion(import.meta.url, 'rbac-syncer');
