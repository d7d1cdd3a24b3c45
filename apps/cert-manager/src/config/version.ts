import { readServiceVersion } from '@outrigger/service';

/** The cert-manager's version, stamped on its Lease while it leads. */
export const CERT_MANAGER_VERSION: string = readServiceVersion(import.meta.url, 'cert-manager');
