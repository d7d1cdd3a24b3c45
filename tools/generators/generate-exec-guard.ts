// Writes the admission policies of deploy/base from libs/install, the definitions the syncer (the
// exec guard) and the tests compare the cluster's with: `npm run generate:exec-guard` after changing
// them (a unit test fails until then).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '@outrigger/control-plane';
import { CERT_MANAGER_CONFINEMENT_FILE, certManagerConfinementYaml, EXEC_GUARD_FILE, execGuardYaml, FORGED_AGENT_POLICY_FILE, forgedAgentPolicyYaml, OPT_IN_AFTER_CREATION_POLICY_FILE, optInAfterCreationPolicyYaml, OPT_IN_MISSING_POLICY_FILE, optInMissingPolicyYaml, SYNCER_CONFINEMENT_FILE, syncerConfinementYaml } from '@outrigger/install';

for (const [file, yaml] of [
  [EXEC_GUARD_FILE, execGuardYaml()],
  [SYNCER_CONFINEMENT_FILE, syncerConfinementYaml()],
  [CERT_MANAGER_CONFINEMENT_FILE, certManagerConfinementYaml()],
  [FORGED_AGENT_POLICY_FILE, forgedAgentPolicyYaml()],
  [OPT_IN_MISSING_POLICY_FILE, optInMissingPolicyYaml()],
  [OPT_IN_AFTER_CREATION_POLICY_FILE, optInAfterCreationPolicyYaml()],
] as const) {
  writeFileSync(join(repoRoot(), file), yaml);
  process.stdout.write(`wrote ${file}\n`);
}
