import { fileURLToPath } from 'node:url';
import { projectConfig } from '../../vitest.shared.ts';

/** The real-cluster suite: one single-node cluster for all its files, Outrigger installed from deploy/. */
export default projectConfig('e2e', {
  include: ['*.e2e.ts'],
  exclude: ['teardown.e2e.ts'],
  globalSetup: [fileURLToPath(new URL('../../libs/control-plane/src/cluster/vitest-cluster-setup.ts', import.meta.url))],
  testTimeout: 300_000,
  hookTimeout: 600_000,
});
