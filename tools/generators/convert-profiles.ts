// Converts a profiles file of the former format (one document, `profiles:` and a list) into
// AgentProfile documents: `npm run -s convert-profiles -- old.yaml > profiles.yaml`, then
// `kubectl apply -f profiles.yaml` (or point PROFILES_FILE at it).
import { readFileSync } from 'node:fs';
import { convertProfilesFile } from '@outrigger/agent-profiles';

const [file] = process.argv.slice(2);
if (!file) {
  process.stderr.write('usage: npm run -s convert-profiles -- <profiles file> > profiles.yaml\n');
  process.exit(2);
}
const converted = convertProfilesFile(readFileSync(file === '-' ? 0 : file, 'utf8'));
if (!converted.ok) {
  process.stderr.write(converted.error.split('\n').map((line) => `${file}: ${line}\n`).join(''));
  process.exit(1);
}
process.stdout.write(converted.value);
