// Sets the release version everywhere it is spelled, then regenerates the chart from it:
// `npm run release:version -- 1.2.0`. Every file's new text is checked before any is written.
import { spawnSync } from 'node:child_process';
import { renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '@outrigger/control-plane';
import { planRelease, readReleaseFiles, readReleaseVersion } from './release-version.ts';

const [version, ...extra] = process.argv.slice(2);
if (version === undefined || extra.length > 0) {
  process.stderr.write('usage: npm run release:version -- <version>   (e.g. 1.2.0 or 1.2.0-rc.1)\n');
  process.exit(2);
}
const root = repoRoot();
const files = readReleaseFiles(root);
const from = readReleaseVersion(root);
let changed: Map<string, string>;
try {
  changed = planRelease(files, version);
} catch (error) {
  process.stderr.write(`release:version: ${(error as Error).message}\n`);
  process.exit(1);
}
for (const [file, text] of changed) {
  writeFileSync(join(root, `${file}.release-tmp`), text);
  renameSync(join(root, `${file}.release-tmp`), join(root, file));
}
process.stdout.write(`${from} -> ${version}: ${changed.size} files\n${[...changed.keys()].map((f) => `  ${f}\n`).join('')}`);
const chart = spawnSync(process.execPath, [...process.execArgv, join(root, 'tools/helm/generate-chart.ts')], { stdio: 'inherit' });
process.exit(chart.status ?? 1);
