// Writes deploy/helm/outrigger from the Kustomize overlays: `npm run generate:helm` after changing
// deploy/ (a unit test fails until then).
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { resolveBinaries } from '@outrigger/control-plane';
import { CHART_DIR, chartFiles, renderVariant, variants } from './chart.ts';

const kubectl = join(await resolveBinaries(), 'kubectl');
const files = chartFiles(new Map(variants().map((v) => [v.id, renderVariant(kubectl, v.enabled)])));
rmSync(CHART_DIR, { recursive: true, force: true });
for (const [path, content] of files) {
  mkdirSync(dirname(join(CHART_DIR, path)), { recursive: true });
  writeFileSync(join(CHART_DIR, path), content);
}
process.stdout.write(`wrote ${files.size} files into deploy/helm/outrigger\n`);
