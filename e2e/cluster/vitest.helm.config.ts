import { fileURLToPath } from 'node:url';
import { projectConfig } from '../../vitest.shared.ts';

/** Outrigger installed, upgraded and uninstalled with Helm (deploy/helm/outrigger), on a cluster of its own. */
export default projectConfig('e2e', {
  include: ['helm.e2e.ts'],
  globalSetup: [fileURLToPath(new URL('helm-cluster-setup.ts', import.meta.url))],
  testTimeout: 600_000,
  hookTimeout: 900_000,
});
