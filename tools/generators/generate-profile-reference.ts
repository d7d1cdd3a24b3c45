// Writes docs/agent-profile.md, the AgentProfile reference, from the profile schema and the
// examples in docs/agent-profile-examples: `npm run generate:profile-reference` after changing either
// (a unit test of libs/agent-profiles fails until then).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PROFILE_REFERENCE_FILE, profileReferenceMarkdown, readProfileExamples } from '@outrigger/agent-profiles';
import { repoRoot } from '@outrigger/control-plane';

const root = repoRoot();
writeFileSync(join(root, PROFILE_REFERENCE_FILE), profileReferenceMarkdown(readProfileExamples(root)));
process.stdout.write(`wrote ${PROFILE_REFERENCE_FILE}\n`);
