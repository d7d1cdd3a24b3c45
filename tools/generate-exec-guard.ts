// Writes deploy/base/rbac-syncer/exec-guard.yaml from libs/install, the definition the rbac-syncer
// compares the cluster's guard with: `npm run generate:exec-guard` after changing it (a unit test fails until then).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '@outrigger/control-plane';
import { EXEC_GUARD_FILE, execGuardYaml } from '@outrigger/install';

writeFileSync(join(repoRoot(), EXEC_GUARD_FILE), execGuardYaml());
process.stdout.write(`wrote ${EXEC_GUARD_FILE}\n`);
