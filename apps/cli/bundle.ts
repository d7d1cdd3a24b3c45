import { readFileSync } from 'node:fs';
import { build } from 'esbuild';
import { REFERENCE_PROFILE_FILE } from '@outrigger/agent-profiles';

// `outrigger` as one file for the GitHub release: Node 24 and this file, nothing else.
const { version } = JSON.parse(readFileSync(new URL('package.json', import.meta.url), 'utf8')) as { version: string };
await build({
  entryPoints: [new URL('src/main.ts', import.meta.url).pathname],
  outfile: new URL('dist/outrigger.mjs', import.meta.url).pathname,
  bundle: true,
  platform: 'node',
  target: 'node24',
  format: 'esm',
  // client-node (for exec and auth-provider kubeconfigs) is most of it: minified, ~5 MB.
  minify: true,
  // Workspace libraries from their sources, as the tests use them.
  conditions: ['development'],
  // CommonJS dependencies bundled into ESM still call require() for Node's built-ins.
  banner: { js: "import { createRequire as outriggerRequire } from 'node:module';\nconst require = outriggerRequire(import.meta.url);" },
  define: { OUTRIGGER_EMBEDDED: JSON.stringify({ version, referenceProfile: readFileSync(REFERENCE_PROFILE_FILE, 'utf8') }) },
  logLevel: 'warning',
});
