#!/usr/bin/env node
// The workspace's `npx outrigger`: runs the built CLI, building it first (npx nx run cli:build) when
// it or a library it imports has not been built yet, as on a fresh clone.
import { spawnSync } from 'node:child_process';
import { existsSync, realpathSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const main = new URL('../dist/main.js', import.meta.url);
const workspace = fileURLToPath(new URL('../../../', import.meta.url));

// ESM links every import before running any code, so a missing file fails here with nothing done yet.
async function load() {
  try {
    await import(main.href);
    return undefined;
  } catch (error) {
    if (error?.code !== 'ERR_MODULE_NOT_FOUND') throw error;
    return error;
  }
}

function fail(message) {
  process.stderr.write(`outrigger: ${message}\n`);
  process.exit(1);
}

// The missing file as a path in the workspace when it is one of its own builds (a dist/ of an app or
// a library; a library is reached through its node_modules/@outrigger link).
function missingBuild(error) {
  const named = /Cannot find (?:module|package) '([^']+)'/.exec(error.message)?.[1] ?? '';
  if (!named.startsWith('/')) return undefined;
  let existing = named;
  while (existing !== dirname(existing) && !existsSync(existing)) existing = dirname(existing);
  const path = relative(workspace, join(realpathSync(existing), relative(existing, named)));
  return /^(apps|libs)\/[^/]+\/dist\//.test(path) ? path : undefined;
}

const missing = await load();
if (missing) {
  const path = missingBuild(missing);
  if (!path) fail(`cannot load a module it needs (${missing.message.split('\n')[0]}); run \`npm ci\` in ${workspace}`);
  process.stderr.write(`outrigger: not built yet (${path} is missing); building it: npx nx run cli:build\n`);
  let nx;
  try {
    nx = createRequire(import.meta.url).resolve('nx/bin/nx.js');
  } catch {
    fail(`nx is not installed; run \`npm ci\` in ${workspace}`);
  }
  // The build's output goes to stderr: stdout is the command's (inject writes manifests there).
  const build = spawnSync(process.execPath, [nx, 'run', 'cli:build', '--outputStyle=static'], {
    cwd: workspace,
    stdio: ['ignore', 2, 2],
    env: { ...process.env, NX_DAEMON: 'false', NX_NO_CLOUD: 'true', NX_TUI: 'false' },
  });
  if (build.status !== 0) fail(`building the CLI failed (exit ${build.status ?? build.signal}); see above, or run \`npx nx run cli:build\` in ${workspace}`);
  const still = await load();
  if (still) fail(`still cannot load the built CLI after building it: ${still.message.split('\n')[0]}`);
}
