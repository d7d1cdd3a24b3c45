import { fileURLToPath } from 'node:url';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { projectConfig } from '../../vitest.shared.ts';

/** The files in Vitest's order, except uninstall.e2e.ts, which removes Outrigger: always last. */
class UninstallLast extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const last = (f: TestSpecification) => f.moduleId.endsWith('uninstall.e2e.ts');
    return [...sorted.filter((f) => !last(f)), ...sorted.filter(last)];
  }
}

/** The real-cluster suite: one single-node cluster for all its files, Outrigger installed from deploy/. */
export default projectConfig('e2e', {
  include: ['*.e2e.ts'],
  exclude: ['teardown.e2e.ts', 'helm.e2e.ts'],
  globalSetup: [fileURLToPath(new URL('../../libs/control-plane/src/cluster/vitest-cluster-setup.ts', import.meta.url))],
  testTimeout: 300_000,
  hookTimeout: 600_000,
  sequence: { sequencer: UninstallLast },
});
