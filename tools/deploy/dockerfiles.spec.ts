import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '@outrigger/control-plane';
import { describe, expect, it } from 'vitest';

/**
 * The Dockerfiles cannot be built here (no Docker engine), so check what they copy against the
 * workspace: the app's nx build output, the built libs it imports (transitively), and every
 * workspace package.json (npm ci needs them to match the lockfile).
 */
const root = repoRoot();
const APPS = ['injector', 'rbac-syncer', 'cert-manager'] as const;
const LIBS = readdirSync(join(root, 'libs'));

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'testing' ? [] : sources(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts') ? [path] : [];
  });
}

function importedLibs(dir: string): Set<string> {
  const found = new Set<string>();
  for (const file of sources(dir)) {
    for (const match of readFileSync(file, 'utf8').matchAll(/from '@outrigger\/([a-z-]+)'/g)) found.add(match[1] ?? '');
  }
  return found;
}

/** The libs an app's production code loads, following the libs' own imports. */
function runtimeLibs(app: string): string[] {
  const seen = new Set<string>();
  const queue = [...importedLibs(join(root, 'apps', app, 'src'))];
  while (queue.length > 0) {
    const lib = queue.pop() ?? '';
    if (seen.has(lib)) continue;
    seen.add(lib);
    queue.push(...importedLibs(join(root, 'libs', lib, 'src')));
  }
  return [...seen].sort();
}

describe.each(APPS)('apps/%s/Dockerfile', (app) => {
  const dockerfile = readFileSync(join(root, 'apps', app, 'Dockerfile'), 'utf8');
  const copiedLibs = [...dockerfile.matchAll(/^COPY --from=build \/src\/libs\/([a-z-]+)\/dist libs\/\1\/dist$/gm)].map((m) => m[1]).sort();

  it('is multi-stage: nx build in the first stage, production dependencies only in the runtime', () => {
    expect(dockerfile).toMatch(new RegExp(`RUN npm ci && npx nx run ${app}:build`));
    expect(dockerfile).toMatch(/RUN npm ci --omit=dev/);
    expect(dockerfile.match(/^FROM /gm)).toHaveLength(2);
  });

  it('copies exactly the build output and the built libs the app imports', () => {
    expect(dockerfile).toContain(`COPY --from=build /src/dist/apps/${app} dist/apps/${app}`);
    expect(copiedLibs).toEqual(runtimeLibs(app));
    expect(copiedLibs).not.toContain('control-plane');
  });

  it('copies every workspace package.json before npm ci, runs as a non-root user, starts main.js', () => {
    for (const dir of [...APPS.map((a) => `apps/${a}`), ...LIBS.map((l) => `libs/${l}`)]) {
      expect(dockerfile).toContain(`COPY ${dir}/package.json ${dir}/`);
    }
    expect(dockerfile).toMatch(/^USER [1-9][0-9]*:[1-9][0-9]*$/m);
    expect(dockerfile).toContain(`CMD ["node", "dist/apps/${app}/main.js"]`);
  });
});
