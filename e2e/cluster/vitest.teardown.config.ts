import { projectConfig } from '../../vitest.shared.ts';

/** Starts and stops clusters itself (Ctrl-C, a killed owner): runs before the suite, with no shared cluster. */
export default projectConfig('e2e', { include: ['teardown.e2e.ts'], globalSetup: [], testTimeout: 900_000, hookTimeout: 60_000 });
