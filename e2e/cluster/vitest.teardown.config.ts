import { fileURLToPath } from 'node:url';
import { projectConfig } from '../../vitest.shared.ts';

/** Starts and stops clusters itself (Ctrl-C, a killed owner): runs before the suite, with no shared cluster; on a fresh machine, builds what they run first. */
export default projectConfig('e2e', {
  include: ['teardown.e2e.ts'],
  globalSetup: [fileURLToPath(new URL('../../libs/control-plane/src/cluster/vitest-cluster-parts-setup.ts', import.meta.url))],
  testTimeout: 900_000,
  hookTimeout: 60_000,
});
