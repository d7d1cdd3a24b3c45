// npm run images:push -- --registry HOST[:PORT]/PATH [...]: builds the images and pushes them with
// buildah (tools/images/push.sh runs tools/images/build.sh), and writes to --out: images.txt (every image by
// digest, for mirroring), digests.env, kustomization.yaml (an overlay of --base pinned to the
// digests: kubectl apply -k DIR) and, for a whole release, helm-values.yaml (the chart's values pinned).
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { DEPLOY_DIR, render, resolveBinaries, runScript } from '@outrigger/control-plane';
import { CHART_DIR, pinDigests } from '../helm/chart.ts';
import { digestsEnv, imageList, parsePushArgs, parsePushed, pinnedOverlay, RELEASE_IMAGES, tagOf } from './push-plan.ts';

const log = (line: string) => process.stderr.write(`${line}\n`);
const root = resolve(DEPLOY_DIR, '..');

async function main(): Promise<void> {
  const args = parsePushArgs(process.argv.slice(2));
  const base = resolve(root, args.base);
  if (!existsSync(join(base, 'kustomization.yaml'))) throw new Error(`--base ${args.base}: no kustomization.yaml in ${base}`);
  if (args.certDir !== undefined && !existsSync(args.certDir)) throw new Error(`--cert-dir ${args.certDir}: no such directory`);
  const authFile = process.env['REGISTRY_AUTH_FILE'];
  if (authFile !== undefined && !existsSync(authFile)) throw new Error(`REGISTRY_AUTH_FILE ${authFile}: no such file`);
  const tag = args.tag ?? tagOf(await runScript('tools/images/build-version.sh', [], log));
  const out = resolve(args.out ?? join(root, 'dist', 'images', tag));

  log('building the images (reused when their inputs are unchanged) and pushing them');
  const pushed = parsePushed(await runScript('tools/images/push.sh', [args.registry, tag, args.certDir ?? '', ...args.images], log));
  const missing = args.images.filter((name) => !pushed.some((p) => p.name === name));
  if (missing.length > 0) throw new Error(`nothing was pushed for ${missing.join(', ')}`);

  const kubectl = join(await resolveBinaries(log, ['kubectl']), 'kubectl');
  const objects = render(kubectl, relative(DEPLOY_DIR, base));
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, 'images.txt'), imageList(pushed));
  writeFileSync(join(out, 'digests.env'), digestsEnv(pushed));
  writeFileSync(join(out, 'kustomization.yaml'), pinnedOverlay(relative(out, base), objects, pushed));
  const whole = RELEASE_IMAGES.every((name) => args.images.includes(name));
  if (whole) writeFileSync(join(out, 'helm-values.yaml'), pinDigests(readFileSync(join(CHART_DIR, 'values.yaml'), 'utf8'), digestsEnv(pushed)));
  for (const p of pushed) log(`pushed ${p.repository}:${tag} ${p.digest}`);
  log(`wrote ${out}: images.txt, digests.env, kustomization.yaml (kubectl apply -k ${out})${whole ? ', helm-values.yaml (helm install -f)' : ''}`);
  process.stdout.write(`${out}\n`);
}

main().catch((error: Error) => {
  process.stderr.write(`images:push: ${error.message}\n`);
  process.exit(1);
});
