// The release workflow's step before `helm package`: pins the chart's images to the digests the
// image jobs pushed, in deploy/helm/outrigger/values.yaml.
//   node --import tsx --conditions development tools/helm/pin-digests.ts digests.env
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CHART_DIR, pinDigests } from './chart.ts';

const [file] = process.argv.slice(2);
if (!file) throw new Error('usage: pin-digests.ts DIGESTS_FILE');
const valuesFile = join(CHART_DIR, 'values.yaml');
writeFileSync(valuesFile, pinDigests(readFileSync(valuesFile, 'utf8'), readFileSync(file, 'utf8')));
process.stdout.write(`pinned the chart's images to the digests in ${file}\n`);
