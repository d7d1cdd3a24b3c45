// Writes the AgentProfile CRD, generated from the services' own profile schema:
// `npm run generate:crd` after changing libs/admission/src/profiles (a unit test fails until then).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { AGENT_PROFILE_CRD_FILE, agentProfileCrdYaml } from '@outrigger/agent-profiles';
import { repoRoot } from '@outrigger/control-plane';

const file = join(repoRoot(), AGENT_PROFILE_CRD_FILE);
writeFileSync(file, agentProfileCrdYaml());
process.stdout.write(`wrote ${AGENT_PROFILE_CRD_FILE}\n`);
